import { readiness, type ReplicaProcess, type ReplicaSet } from './replica-set.js';

/**
 * The load balancer's active health check, which nginx's open-source build lacks: it asks each
 * replica's `GET /ready` every `intervalMs` and takes a replica out of nginx's rotation (marked
 * `down`, a graceful reload) from its first failed probe, and back once it answers 200 again. A
 * Kubernetes Service, HAProxy's `option httpchk` or nginx Plus's `health_check` do the same.
 */
export class HealthChecker {
  private readonly down = new Set<ReplicaProcess>();
  private timer: NodeJS.Timeout | null = null;
  private probing: Promise<void> = Promise.resolve();
  /** Each change, as it was applied: the replicas out of rotation after it. */
  readonly changes: Array<{ at: number; down: number[] }> = [];

  constructor(
    private readonly set: ReplicaSet,
    private readonly intervalMs = 200,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      this.probing = this.probing.then(() => this.probe());
    }, this.intervalMs);
  }

  async stop(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    await this.probing;
  }

  /** Whether the replica is in rotation now. */
  inRotation(replica: ReplicaProcess): boolean {
    return !this.down.has(replica);
  }

  private async probe(): Promise<void> {
    const statuses = await Promise.all(this.set.replicas.map((replica) => readiness(replica.url)));
    let changed = false;
    this.set.replicas.forEach((replica, index) => {
      const ready = statuses[index] === 200;
      if (ready === this.down.has(replica)) {
        changed = true;
        if (ready) this.down.delete(replica);
        else this.down.add(replica);
      }
    });
    if (!changed) return;
    await this.set.markDown(this.down);
    this.changes.push({ at: performance.now(), down: [...this.down].map((replica) => replica.number).sort() });
  }
}
