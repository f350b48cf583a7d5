import { SwapList } from '../core/index.js';
import { requireMilliseconds } from './check-arguments.js';
import type { BudgetedEntry, BudgetOutcome, BudgetUsage, ByteBudget, ChargeOutcome, KeyCap, Meter, SharedState, WindowCount } from './shared-state.js';

/** What became of an operation after its caller stopped waiting: answered (with its value) or failed. */
export type LateOutcome = { readonly answered: true; readonly value: unknown } | { readonly answered: false };

/** A request-path operation the state did not answer in time, or refused at once while the breaker is open. */
export class StateUnavailableError extends Error {
  constructor(
    message: string,
    /** True when refused without asking the state (the breaker is open). */
    readonly breakerOpen: boolean,
    /**
     * Past the budget, what became of the operation once known: the caller went on without it,
     * and only the caller knows what undoing it means (an admission gives back what it took).
     * Null when the state was not asked.
     */
    readonly late: Promise<LateOutcome> | null = null,
  ) {
    super(message);
    this.name = 'StateUnavailableError';
  }
}

export interface RequestPathStateOptions {
  /** How long a request waits for one state operation before it goes on as if the state were down. */
  budgetMs: number;
  /** Failures (timeouts included) in a row that declare the state down. */
  failuresToOpen?: number;
  /** How often the state is asked whether it answers again while it is declared down. */
  probeIntervalMs?: number;
  /** Told once when the state is declared down, with the failure that decided it. */
  onDown?: (error: unknown) => void;
  /** Told once when it answers within the budget again. */
  onUp?: (downForMs: number) => void;
}

/** What operators (and later the metrics) read: counters since start, never reset. */
export interface RequestPathStateStatus {
  /** False while the breaker is open: requests do not wait on the state. */
  available: boolean;
  /** When it was declared down (epoch ms); null while available. */
  downSince: number | null;
  /** How many times it was declared down. */
  outages: number;
  /** Operations that exceeded the budget. */
  timeouts: number;
  /** Operations that failed (timeouts included). */
  failures: number;
  /** Operations refused at once while it was down. */
  refused: number;
}

export const DEFAULT_FAILURES_TO_OPEN = 5;
export const DEFAULT_PROBE_INTERVAL_MS = 1_000;
/** Read by the probe: a key nobody writes, so the answer is one GET of nothing. */
const PROBE_KEY = 'request-path-probe';

interface Waiting {
  listSlot: number;
  readonly deadline: number;
  readonly fail: (error: StateUnavailableError) => void;
  done: boolean;
  /** Set once its caller stopped waiting: told what became of the operation. */
  late: ((outcome: LateOutcome) => void) | null;
}

/**
 * The shared state as the request path sees it: every operation has a latency budget, after which
 * the request goes on as the state's users do when it is down (limits let through uncounted, a
 * session routed by its rendezvous choice), and a circuit breaker: after `failuresToOpen` failures
 * in a row the state is declared down (`onDown`, once), operations are refused at once without
 * asking it, and a probe asks it every `probeIntervalMs` until it answers within the budget again
 * (`onUp`, once); a connection that is back (`onAvailability`) is probed at once.
 *
 * An operation its caller stopped waiting for is not cancelled (the state may still run it): the
 * error its caller got carries a promise of what became of it (`late`), so that the caller can
 * undo it (caller limits give back an admission). Messages, `close` and `onAvailability` go to the
 * state as they are. Work off the request path (settlements, renewals) uses the state itself.
 *
 * The budget is kept with one timer for every waiting operation, set for the earliest deadline,
 * which fires its check after the event loop has read the sockets, so a reply already received is
 * never taken for a timeout.
 */
export class RequestPathState implements SharedState {
  private readonly budgetMs: number;
  private readonly failuresToOpen: number;
  private readonly probeIntervalMs: number;
  /** Not a Set (core/swap-list.ts says why); in no order, so expiry looks at each. */
  private readonly waiting = new SwapList<Waiting>();
  private timer: NodeJS.Timeout | null = null;
  private failuresInARow = 0;
  private downSince: number | null = null;
  private probe: NodeJS.Timeout | null = null;
  private probing = false;
  private counts = { outages: 0, timeouts: 0, failures: 0, refused: 0 };
  private readonly stopWatching: () => void;
  private readonly expire = (): void => this.expireWaiting();

  constructor(
    private readonly inner: SharedState,
    private readonly options: RequestPathStateOptions,
  ) {
    requireMilliseconds('budgetMs', options.budgetMs);
    this.budgetMs = options.budgetMs;
    this.failuresToOpen = options.failuresToOpen ?? DEFAULT_FAILURES_TO_OPEN;
    this.probeIntervalMs = options.probeIntervalMs ?? DEFAULT_PROBE_INTERVAL_MS;
    // A lost connection is not a verdict of its own: operations then fail at once, and those
    // failures decide (a reconnection that flaps while nobody asks says nothing to operators).
    // A connection back is worth a probe at once, though, rather than at the next interval.
    this.stopWatching = inner.onAvailability((available) => {
      if (!available) return;
      if (this.downSince !== null) void this.runProbe();
    });
  }

  status(): RequestPathStateStatus {
    return { available: this.downSince === null, downSince: this.downSince, ...this.counts };
  }

  get(key: string): Promise<string | null> {
    return this.guard(() => this.inner.get(key));
  }

  set(key: string, value: string, ttlMs: number): Promise<void> {
    return this.guard(() => this.inner.set(key, value, ttlMs));
  }

  delete(key: string): Promise<boolean> {
    return this.guard(() => this.inner.delete(key));
  }

  setIfAbsent(key: string, value: string, ttlMs: number, cap?: KeyCap): Promise<string> {
    return this.guard(() => this.inner.setIfAbsent(key, value, ttlMs, cap));
  }

  compareAndSet(key: string, expected: string | null, value: string, ttlMs: number): Promise<boolean> {
    return this.guard(() => this.inner.compareAndSet(key, expected, value, ttlMs));
  }

  touch(key: string, ttlMs: number): Promise<boolean> {
    return this.guard(() => this.inner.touch(key, ttlMs));
  }

  getAndTouch(key: string, ttlMs: number): Promise<string | null> {
    return this.guard(() => this.inner.getAndTouch(key, ttlMs));
  }

  addToWindow(key: string, amount: number, windowMs: number): Promise<WindowCount> {
    return this.guard(() => this.inner.addToWindow(key, amount, windowMs));
  }

  charge(meters: readonly Meter[]): Promise<ChargeOutcome> {
    return this.guard(() => this.inner.charge(meters));
  }

  setWithinBudget(pool: string, group: string, entries: readonly BudgetedEntry[], ttlMs: number, budget: ByteBudget): Promise<BudgetOutcome> {
    return this.guard(() => this.inner.setWithinBudget(pool, group, entries, ttlMs, budget));
  }

  budgetUsage(pool: string, group: string): Promise<BudgetUsage> {
    return this.guard(() => this.inner.budgetUsage(pool, group));
  }

  setField(key: string, field: string, value: string, ttlMs: number): Promise<void> {
    return this.guard(() => this.inner.setField(key, field, value, ttlMs));
  }

  readFields(key: string): Promise<Record<string, string>> {
    return this.guard(() => this.inner.readFields(key));
  }

  publish(channel: string, message: string): Promise<void> {
    return this.inner.publish(channel, message);
  }

  subscribe(channel: string, listener: (message: string) => void): Promise<() => Promise<void>> {
    return this.inner.subscribe(channel, listener);
  }

  onAvailability(listener: (available: boolean) => void): () => void {
    return this.inner.onAvailability(listener);
  }

  async close(): Promise<void> {
    this.stopWatching();
    this.stopProbing();
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    await this.inner.close();
  }

  /** The operation within the budget. */
  private guard<T>(operation: () => Promise<T>): Promise<T> {
    if (this.downSince !== null) {
      this.counts.refused++;
      return Promise.reject(new StateUnavailableError('the shared state is declared down; not asked', true));
    }
    return new Promise<T>((resolve, reject) => {
      const waiting: Waiting = { listSlot: -1, deadline: performance.now() + this.budgetMs, fail: reject, done: false, late: null };
      this.waiting.add(waiting);
      this.timer ??= this.armTimer(this.budgetMs);
      operation().then(
        (value) => {
          if (waiting.done) {
            waiting.late?.({ answered: true, value });
            return;
          }
          waiting.done = true;
          this.waiting.remove(waiting);
          this.failuresInARow = 0;
          resolve(value);
        },
        (error: unknown) => {
          if (waiting.done) {
            waiting.late?.({ answered: false });
            return;
          }
          waiting.done = true;
          this.waiting.remove(waiting);
          // A bad argument is the caller's bug, not the state's health.
          if (!(error instanceof TypeError)) this.noteFailure(error);
          reject(error);
        },
      );
    });
  }

  private armTimer(delayMs: number): NodeJS.Timeout {
    // setImmediate: the check runs after the poll phase, once replies already received are read.
    const timer = setTimeout(() => setImmediate(this.expire), Math.max(0, Math.ceil(delayMs)));
    timer.unref();
    return timer;
  }

  private expireWaiting(): void {
    this.timer = null;
    const now = performance.now();
    let next = Number.POSITIVE_INFINITY;
    // Backwards: removing the one at hand moves the last, which was looked at already.
    for (let slot = this.waiting.size - 1; slot >= 0; slot--) {
      const waiting = this.waiting.at(slot);
      if (waiting === undefined) continue;
      if (waiting.deadline > now) {
        next = Math.min(next, waiting.deadline);
        continue;
      }
      waiting.done = true;
      this.waiting.remove(waiting);
      this.counts.timeouts++;
      const late = new Promise<LateOutcome>((resolve) => {
        waiting.late = resolve;
      });
      const error = new StateUnavailableError(`the shared state did not answer within ${this.budgetMs} ms`, false, late);
      this.noteFailure(error);
      waiting.fail(error);
    }
    if (next !== Number.POSITIVE_INFINITY) this.timer = this.armTimer(next - now);
  }

  private noteFailure(error: unknown): void {
    this.counts.failures++;
    this.failuresInARow++;
    if (this.failuresInARow >= this.failuresToOpen) this.declareDown(error);
  }

  private declareDown(error: unknown): void {
    if (this.downSince !== null) return;
    this.downSince = Date.now();
    this.counts.outages++;
    this.options.onDown?.(error);
    this.probe = setInterval(() => void this.runProbe(), this.probeIntervalMs);
    this.probe.unref();
  }

  /** One GET within the budget; answered in time, the state is up again. */
  private async runProbe(): Promise<void> {
    if (this.probing || this.downSince === null) return;
    this.probing = true;
    let timer: NodeJS.Timeout | undefined;
    try {
      const answered = await Promise.race([
        this.inner.get(PROBE_KEY).then(() => true),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), this.budgetMs);
        }),
      ]);
      if (answered) this.declareUp();
    } catch {
      // Still down: the next probe asks again.
    } finally {
      clearTimeout(timer);
      this.probing = false;
    }
  }

  private declareUp(): void {
    if (this.downSince === null) return;
    const downForMs = Date.now() - this.downSince;
    this.downSince = null;
    this.failuresInARow = 0;
    this.stopProbing();
    this.options.onUp?.(downForMs);
  }

  private stopProbing(): void {
    if (this.probe !== null) clearInterval(this.probe);
    this.probe = null;
  }
}
