/**
 * An async iterator whose first item has been read already: it gives that item again, then the
 * rest of its source. A stream that fails before its first item can so be replaced (by another
 * upstream) before anything was sent, and the item is not lost. After the first item `next` is
 * the source's own: nothing is added per item.
 */
export class Peeked<T> implements AsyncIterableIterator<T> {
  /** The first read, given again by the first `next` (the same promise: nothing is made to give it). */
  private pending: Promise<IteratorResult<T>> | null;

  constructor(
    first: Promise<IteratorResult<T>>,
    /** True when the source ended before giving an item: it answered nothing. */
    readonly empty: boolean,
    private readonly source: AsyncIterator<T>,
  ) {
    this.pending = first;
  }

  next(): Promise<IteratorResult<T>> {
    const pending = this.pending;
    if (pending === null) return this.source.next();
    this.pending = null;
    return pending;
  }

  /** Ends the source early (a client that left): it stops its own work (an upstream call). */
  async return(): Promise<IteratorResult<T>> {
    this.pending = null;
    await this.source.return?.();
    return { done: true, value: undefined };
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

/** Reads the first item of `source` and hands back an iterator that gives it again, then the rest. */
export async function peekFirst<T>(source: AsyncIterable<T>): Promise<Peeked<T>> {
  const iterator = source[Symbol.asyncIterator]();
  const first = iterator.next();
  const { done } = await first;
  return new Peeked(first, done === true, iterator);
}
