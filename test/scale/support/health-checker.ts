import { readiness, type ReplicaProcess, type ReplicaSet } from './replica-set.js';

/**
 * The load balancer's active health check, which nginx's open-source build lacks: it asks each
 * replica's `GET /ready` every `intervalMs` and takes a replica out of nginx's rotation (marked
 * `down`, a graceful reload) from its first failed probe, and back once it answers 200 again, as
 * HAProxy's `option httpchk` or nginx Plus's `health_check` do. When no replica is ready (Redis or
 * PostgreSQL down for all of them alike) it keeps them all in rotation, as Envoy's panic
 * threshold and cloud load balancers do: a gateway that serves without its state is better than none.
 */
export class HealthChecker {
  private readonly down = new Set<ReplicaProcess>();
  private timer: NodeJS.Timeout | null = null;
  private probing: Promise<void> = Promise.resolve();

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
    const unready = this.set.replicas.filter((_, index) => statuses[index] !== 200);
    const down = unready.length === this.set.replicas.length ? [] : unready;
    if (down.length === this.down.size && down.every((replica) => this.down.has(replica))) return;
    this.down.clear();
    for (const replica of down) this.down.add(replica);
    await this.set.markDown(this.down);
  }
}
