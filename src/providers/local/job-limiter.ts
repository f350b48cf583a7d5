import { GatewayError } from '../../errors/index.js';

export interface JobLimiterOptions {
  /** Jobs that run at once (worker threads, or sequences of a loaded model). */
  concurrency: number;
  /** Jobs that may wait for a free slot; one more is refused at once. */
  maxQueue: number;
  /** Named in the busy error, e.g. "local speech". */
  engineName: string;
}

interface Waiter {
  start: () => void;
}

/**
 * Bounds an engine's work: `concurrency` jobs run, `maxQueue` wait, and the next one is refused
 * with 503 `engine_busy` and a Retry-After estimated from how long recent jobs took, so a busy
 * engine answers at once instead of stalling its callers (or anything else).
 */
export class JobLimiter {
  private running = 0;
  private readonly waiting: Waiter[] = [];
  /** Exponential moving average of job durations, for Retry-After. */
  private averageJobMs = 1_000;

  constructor(private readonly options: JobLimiterOptions) {}

  get active(): number {
    return this.running;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /** Runs `job` when a slot is free. A job still waiting when `signal` aborts leaves the queue and rejects with the signal's reason. */
  async run<T>(job: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.running >= this.options.concurrency) await this.waitForSlot(signal);
    else this.running++;
    const startedAt = performance.now();
    try {
      return await job();
    } finally {
      this.averageJobMs = this.averageJobMs * 0.8 + (performance.now() - startedAt) * 0.2;
      this.release();
    }
  }

  private waitForSlot(signal: AbortSignal | undefined): Promise<void> {
    if (this.waiting.length >= this.options.maxQueue) {
      const rounds = Math.ceil((this.waiting.length + 1) / this.options.concurrency);
      const retryAfterSeconds = Math.max(1, Math.ceil((rounds * this.averageJobMs) / 1000));
      return Promise.reject(
        new GatewayError(
          'engine_busy',
          `The ${this.options.engineName} engine is busy (${this.running} running, ${this.waiting.length} waiting); retry shortly.`,
          {
            retryAfterSeconds,
          },
        ),
      );
    }
    signal?.throwIfAborted();
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const index = this.waiting.indexOf(waiter);
        if (index >= 0) this.waiting.splice(index, 1);
        reject(signal?.reason);
      };
      const waiter: Waiter = {
        start: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  private release(): void {
    const next = this.waiting.shift();
    // The slot passes straight to the next waiter, so `running` stays as it is.
    if (next !== undefined) next.start();
    else this.running--;
  }
}
