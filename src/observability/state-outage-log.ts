/** What the outage log writes to: a pino logger. */
interface OutageLogger {
  warn(fields: object, message: string): void;
  info(fields: object, message: string): void;
}

/**
 * The shared state's outages as the log tells them: one warning when it is lost, whichever part
 * of the process finds out first (the request path's breaker, the routing state's connection), and
 * one line when every part that lost it has it again. An operator reads one outage as one pair of
 * lines, not a line per part and per retry; while it lasts, other parts' failures to reach the
 * state are the outage's, and `down` tells them to say nothing.
 */
export class StateOutageLog {
  private readonly losing = new Set<string>();
  private downSince: number | null = null;

  constructor(
    private readonly logger: OutageLogger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether an outage is under way. */
  get down(): boolean {
    return this.downSince !== null;
  }

  /** `part` cannot reach the state: the first part to say so in an outage warns. */
  lost(part: string, error: unknown): void {
    if (this.losing.has(part)) return;
    this.losing.add(part);
    if (this.downSince !== null) return;
    this.downSince = this.now();
    this.logger.warn(
      { err: error, part },
      'shared state unreachable; requests go on without it (limits let through uncounted, sessions routed by rendezvous hashing, credential states as this process knows them) until it answers again',
    );
  }

  /** `part` reaches the state again: the last of the parts that lost it says so. */
  found(part: string): void {
    if (!this.losing.delete(part) || this.losing.size > 0 || this.downSince === null) return;
    const downForMs = this.now() - this.downSince;
    this.downSince = null;
    this.logger.info(
      { downForMs },
      `shared state answers again after ${Math.round(downForMs / 1000)} s; limits, sessions and credential states are shared again`,
    );
  }
}
