import type { RequestLogQuery, RequestLogStore, StoredRequestLogEntry } from '../store/index.js';

/**
 * How far back each poll of `tail` looks again. A row's `logged_at` is stamped before its
 * transaction commits, and gateways on other machines have their own clocks, so a row can become
 * visible with a time a little earlier than rows already shown. Seen ids are remembered this long.
 */
export const TAIL_OVERLAP_MS = 5_000;

/** Follows the log in the order rows are written, each row once. */
export class RequestFollower {
  /** Ids returned, with when they were written; forgotten once older than any poll reads again. */
  private readonly seen = new Map<string, number>();
  /** The newest write time seen, or the first poll's time while nothing newer has been. */
  private cursor: number | null = null;

  constructor(
    private readonly store: RequestLogStore,
    private readonly filter: RequestLogQuery & { limit: number },
  ) {}

  /** Rows written since the first poll (which starts at `now`) and not returned before, oldest first. */
  async poll(now: number): Promise<StoredRequestLogEntry[]> {
    this.cursor ??= now;
    const fresh: StoredRequestLogEntry[] = [];
    let from = this.cursor - TAIL_OVERLAP_MS;
    for (;;) {
      const page = await this.store.writtenSince(from, this.filter);
      for (const row of page) {
        if (this.seen.has(row.id)) continue;
        this.seen.set(row.id, row.loggedAt ?? from);
        fresh.push(row);
      }
      if (page.length < this.filter.limit) break;
      // A full page: go on after it. Rows sharing its last millisecond are read again and skipped.
      const last = page.at(-1)?.loggedAt ?? from;
      from = last > from ? last : from + 1;
    }
    for (const row of fresh) this.cursor = Math.max(this.cursor, row.loggedAt ?? this.cursor);
    const forgetBefore = this.cursor - 2 * TAIL_OVERLAP_MS;
    for (const [id, loggedAt] of this.seen) if (loggedAt < forgetBefore) this.seen.delete(id);
    return fresh;
  }

  markSeen(rows: readonly StoredRequestLogEntry[]): void {
    for (const row of rows) this.seen.set(row.id, row.loggedAt ?? this.cursor ?? 0);
  }
}
