/**
 * Response body chunks handed from undici's dispatch callbacks to an async iterator, without a
 * Node stream in between. Past `highWaterMark` queued chunks the upstream is paused until the
 * reader catches up, so a slow client never makes the gateway buffer a whole answer.
 */
export class ChunkQueue implements AsyncIterableIterator<Buffer> {
  private readonly chunks: Buffer[] = [];
  private waiting: { resolve: (result: IteratorResult<Buffer>) => void; reject: (error: unknown) => void } | null = null;
  private ended = false;
  private failure: unknown = null;
  private paused = false;

  constructor(
    private readonly control: { pause(): void; resume(): void; abort(): void },
    private readonly highWaterMark = 64,
  ) {}

  push(chunk: Buffer): void {
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

  next(): Promise<IteratorResult<Buffer>> {
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
  return(): Promise<IteratorResult<Buffer>> {
    if (!this.ended && this.failure === null) {
      this.ended = true;
      this.control.abort();
    }
    this.chunks.length = 0;
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<Buffer> {
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
