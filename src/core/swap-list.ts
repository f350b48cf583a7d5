/** An item of a SwapList, which keeps the item's place in `listSlot` (-1 when it is in none). */
export interface Listed {
  listSlot: number;
}

/**
 * The things a long-lived object keeps while they are in flight (open requests, held admissions,
 * watched calls, state operations waited on), in no order: an array where an item is removed by
 * moving the last one into its place.
 *
 * Not a Map or a Set. V8 replaces the table of a Map or Set whose entries keep coming and going,
 * and once the collection is old, it allocates each new table in the old generation too. A replaced
 * table is garbage there until the next full collection, but it still points at everything it held,
 * and the scavenger takes those pointers for live ones: every request whose object was in a
 * replaced table had its whole graph (request, response, record, closures) survive two scavenges
 * and promoted. With the open requests in a Map, plain chat at 64 connections saw 5.2 MB survive
 * each scavenge against 0.6 MB, 2.8 KB promoted a request against 48 B, and the scavenges cost
 * 9.2 µs a request against 2.3 (docs/performance.md). An array is copied only when it grows past
 * its capacity, and a slot it gives up is cleared.
 */
export class SwapList<T extends Listed> {
  private readonly items: T[] = [];

  get size(): number {
    return this.items.length;
  }

  /** Adds `item`, unless it is in the list already. */
  add(item: T): void {
    if (item.listSlot >= 0) return;
    item.listSlot = this.items.length;
    this.items.push(item);
  }

  /** Takes `item` out; false when it was not in the list. */
  remove(item: T): boolean {
    const slot = item.listSlot;
    if (slot < 0 || this.items[slot] !== item) return false;
    item.listSlot = -1;
    const last = this.items.pop() as T;
    if (last !== item) {
      this.items[slot] = last;
      last.listSlot = slot;
    }
    return true;
  }

  /** The item at `index` (0 ≤ index < size), for a walk that may remove items: walk backwards, and only the item at hand or ones already walked move. */
  at(index: number): T | undefined {
    return this.items[index];
  }

  /** The items as they are now: a copy, so that what is done with them may add or remove. */
  values(): T[] {
    return [...this.items];
  }

  find(predicate: (item: T) => boolean): T | undefined {
    return this.items.find(predicate);
  }
}
