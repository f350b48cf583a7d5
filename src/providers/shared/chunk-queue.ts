/**
 * Chunks (response body bytes, or events) handed from callbacks to an async iterator, without a
 * Node stream in between. Past `highWaterMark` queued chunks the upstream is paused until the
 * reader catches up, so a slow client never makes the gateway buffer a whole answer.
 */
export class ChunkQueue<T = Buffer> implements AsyncIterableIterator<T> {
  private readonly chunks: T[] = [];
  private waiting: { resolve: (result: IteratorResult<T>) => void; reject: (error: unknown) => void } | null = null;
  private ended = false;
  private failure: unknown = null;
  private paused = false;

  constructor(
    private readonly control: { pause(): void; resume(): void; abort(): void },
    private readonly highWaterMark = 64,
  ) {}

  push(chunk: T): void {
    if (this.waiting !== null) {
      const { resolve } = this.waiting;
      this.waiting = null;
      resolve({ value: chunk, done: false });
      return;
    }
    this.chunks.push(chunk);
    if (!this.paused && this.chunks.length >= this.highWaterMark) {
      this.paused = true;
      this.control.pause();
    }
  }

  end(): void {
    this.ended = true;
    this.settleWaiting();
  }

  fail(error: unknown): void {
    this.failure = error;
    this.settleWaiting();
  }

  next(): Promise<IteratorResult<T>> {
    const chunk = this.chunks.shift();
    if (chunk !== undefined) {
      if (this.paused && this.chunks.length < this.highWaterMark / 2) {
        this.paused = false;
        this.control.resume();
      }
      return Promise.resolve({ value: chunk, done: false });
    }
    if (this.failure !== null) return Promise.reject(this.failure);
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
    });
  }

  /** The reader stopped early (client gone, or an error upstream of it): stop the upstream too. */
  return(): Promise<IteratorResult<T>> {
    if (!this.ended && this.failure === null) {
      this.ended = true;
      this.control.abort();
    }
    this.chunks.length = 0;
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }

  private settleWaiting(): void {
    if (this.waiting === null) return;
    const { resolve, reject } = this.waiting;
    this.waiting = null;
    if (this.failure !== null) reject(this.failure);
    else resolve({ value: undefined, done: true });
  }
}
