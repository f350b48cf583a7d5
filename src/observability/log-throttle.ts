import { errorSummary } from './error-summary.js';

export interface ThrottleLogger {
  error(object: object, message: string): void;
  warn(object: object, message: string): void;
  info(object: object, message: string): void;
}

interface KindState {
  /** When the last line of this kind was written. */
  loggedAt: number;
  /** Failures since that line that wrote none. */
  suppressed: number;
  /** Failures since the last success, whether logged or not. */
  failures: number;
}

/**
 * Logs a repeated failure once an interval per kind, with how many were left out, so an outage
 * of the database or the shared state writes a few lines instead of one per request (3,300 lines
 * a replica in 30 s before). The first line of an outage carries the stack; the later ones only
 * the message and the count. `recovered` writes one line when a kind that failed works again.
 * No timer: the clock is read when a failure is reported.
 */
export class LogThrottle {
  private readonly kinds = new Map<string, KindState>();

  constructor(
    private readonly logger: ThrottleLogger,
    private readonly intervalMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** `level`: `error` where the failure can lose data (request-log rows past the queue's bound), `warn` otherwise. */
  failure(kind: string, error: unknown, fields: object, message: string, level: 'warn' | 'error' = 'warn'): void {
    const now = this.now();
    const state = this.kinds.get(kind);
    if (state === undefined) {
      this.kinds.set(kind, { loggedAt: now, suppressed: 0, failures: 1 });
      this.logger[level]({ ...fields, kind, err: errorSummary(error, true) }, message);
      return;
    }
    state.failures++;
    if (now - state.loggedAt < this.intervalMs) {
      state.suppressed++;
      return;
    }
    this.logger[level]({ ...fields, kind, err: errorSummary(error, false), suppressed: state.suppressed, failures: state.failures }, message);
    state.loggedAt = now;
    state.suppressed = 0;
  }

  /** The kind works again: one line if it had failed (with how many failures), nothing otherwise. */
  recovered(kind: string, fields: object, message: string): void {
    const state = this.kinds.get(kind);
    if (state === undefined) return;
    this.kinds.delete(kind);
    this.logger.info({ ...fields, kind, failures: state.failures }, message);
  }
}
