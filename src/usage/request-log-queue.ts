import { BoundedFifo } from '../core/index.js';
import type { RequestLogEntry, RequestLogStore } from '../store/index.js';

export interface RequestLogQueueOptions {
  batchSize: number;
  flushIntervalMs: number;
  /** Rows held while the database refuses writes; past it the oldest are dropped and counted. */
  maxQueue: number;
  /** A write failed; `droppedRows` is how many rows have been lost to `maxQueue` so far. */
  onError?: (error: unknown, pendingRows: number, droppedRows: number) => void;
  /** A write succeeded after one or more had failed. */
  onRecovered?: (droppedRows: number) => void;
}

/**
 * Request log rows wait here, off the request path, and are written in batches: when a batch is
 * full or the interval passes. A failed write keeps its rows for the next try, which waits for the
 * interval: while the database is down or locked, a write is tried once an interval, not once a row.
 */
export class RequestLogQueue {
  private readonly pending: BoundedFifo<RequestLogEntry>;
  private writing: Promise<void> | null = null;
  private readonly timer: NodeJS.Timeout;
  private droppedRows = 0;
  /** The last write failed: until one succeeds, only the timer tries again, not each new row. */
  private failing = false;

  constructor(
    private readonly store: RequestLogStore,
    private readonly options: RequestLogQueueOptions,
  ) {
    this.pending = new BoundedFifo(options.maxQueue);
    this.timer = setInterval(() => void this.flush(), options.flushIntervalMs);
    this.timer.unref();
  }

  get dropped(): number {
    return this.droppedRows;
  }

  get size(): number {
    return this.pending.size;
  }

  push(entry: RequestLogEntry): void {
    this.droppedRows += this.pending.push(entry);
    if (this.pending.size >= this.options.batchSize && this.writing === null && !this.failing) void this.flush();
  }

  /** Writes everything queued so far; resolves when it is written or the write failed. */
  async flush(): Promise<void> {
    while (this.writing !== null) await this.writing;
    if (this.pending.size === 0) return;
    this.writing = this.writeAll().finally(() => {
      this.writing = null;
    });
    await this.writing;
  }

  /** Stops the timer and writes what is left, retrying a failed write up to `attempts` times. */
  async close(attempts = 3): Promise<void> {
    clearInterval(this.timer);
    for (let attempt = 0; attempt < attempts && (this.pending.size > 0 || this.writing !== null); attempt++) {
      await this.flush();
    }
  }

  private async writeAll(): Promise<void> {
    while (this.pending.size > 0) {
      const batch = this.pending.peek(this.options.batchSize);
      const droppedBefore = this.droppedRows;
      try {
        await this.store.insertBatch(batch);
      } catch (error) {
        this.failing = true;
        this.options.onError?.(error, this.pending.size, this.droppedRows);
        return;
      }
      if (this.failing) {
        this.failing = false;
        this.options.onRecovered?.(this.droppedRows);
      }
      // Rows dropped past the cap while the batch was on its way were its own (the oldest): only
      // the rest of it is still queued.
      this.pending.drop(batch.length - Math.min(batch.length, this.droppedRows - droppedBefore));
      // SQLite writes synchronously: let requests run between batches so a flush of thousands of
      // rows never stalls the event loop for more than one batch (~0.5 ms at 100 rows).
      if (this.pending.size > 0) await new Promise((resolve) => setImmediate(resolve));
    }
  }
}
