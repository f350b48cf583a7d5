import type { RequestLogQuery, RequestLogStore, StoredRequestLogEntry } from '../../src/store/index.js';

/**
 * The request log's rows matching `filter` once there are at least `count`: rows are written in
 * batches after the request ends, later still on a loaded machine, so a test waits for them (up to
 * `withinMs`) rather than sleeping a guess.
 */
export async function waitForLogRows(store: RequestLogStore, filter: RequestLogQuery, count: number, withinMs = 15_000): Promise<StoredRequestLogEntry[]> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const rows = await store.query({ limit: 1000, ...filter });
    if (rows.length >= count) return rows;
    if (Date.now() > deadline) throw new Error(`the request log has ${rows.length} of the ${count} rows expected for ${JSON.stringify(filter)} after ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
