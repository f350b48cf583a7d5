import { describe, expect, it } from 'vitest';
import type { RequestLogEntry, RequestLogStore, StoredRequestLogEntry } from '../store/index.js';
import { RequestLogQueue } from './request-log-queue.js';

function entry(id: string): RequestLogEntry {
  return {
    id,
    clientRequestId: null,
    createdAt: 1,
    tokenId: null,
    team: null,
    project: null,
    endpoint: 'chat.completions',
    model: null,
    upstream: null,
    upstreamModel: null,
    sessionId: null,
    status: 200,
    latencyMs: 1,
    ttfbMs: null,
    promptTokens: null,
    completionTokens: null,
    cachedTokens: null,
    cacheWriteTokens: null,
    reasoningTokens: null,
    costUsd: null,
    usageSource: null,
    errorCode: null,
    sessionSource: null,
    affinity: null,
    attempts: null,
    clientAddress: null,
    worker: null,
  };
}

/** A store that refuses writes while `failing` is set, as a database that went away would. */
class FlakyStore implements RequestLogStore {
  failing = false;
  batches: string[][] = [];
  async insertBatch(entries: readonly RequestLogEntry[]): Promise<void> {
    if (this.failing) throw new Error('database unavailable');
    this.batches.push(entries.map((item) => item.id));
  }
  async query(): Promise<StoredRequestLogEntry[]> {
    return [];
  }
  async writtenSince(): Promise<StoredRequestLogEntry[]> {
    return [];
  }
  async count(): Promise<number> {
    return this.batches.flat().length;
  }
}

describe('RequestLogQueue', () => {
  it('writes in batches of the configured size', async () => {
    const store = new FlakyStore();
    const queue = new RequestLogQueue(store, { batchSize: 2, flushIntervalMs: 60_000, maxQueue: 100 });
    for (const id of ['a', 'b', 'c', 'd', 'e']) queue.push(entry(id));
    await queue.close();
    expect(store.batches).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
  });

  it('keeps rows through a failed write and writes them once the store is back, in order', async () => {
    const store = new FlakyStore();
    const errors: number[] = [];
    const queue = new RequestLogQueue(store, { batchSize: 10, flushIntervalMs: 60_000, maxQueue: 100, onError: (_error, pending) => errors.push(pending) });
    store.failing = true;
    queue.push(entry('a'));
    queue.push(entry('b'));
    await queue.flush();
    expect(errors).toEqual([2]);
    expect(queue.size).toBe(2);
    store.failing = false;
    queue.push(entry('c'));
    await queue.close();
    expect(store.batches.flat()).toEqual(['a', 'b', 'c']);
    expect(queue.size).toBe(0);
  });

  it('while writes fail, tries again on its interval, not on each row that fills a batch', async () => {
    const store = new FlakyStore();
    let tries = 0;
    const insert = store.insertBatch.bind(store);
    store.insertBatch = (entries) => {
      tries++;
      return insert(entries);
    };
    const queue = new RequestLogQueue(store, { batchSize: 2, flushIntervalMs: 60_000, maxQueue: 1_000 });
    store.failing = true;
    for (let index = 0; index < 100; index++) {
      queue.push(entry(`r${index}`));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(tries).toBe(1);
    store.failing = false;
    await queue.flush();
    expect(store.batches.flat().length).toBe(100);
    queue.push(entry('x'));
    queue.push(entry('y'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(store.batches.at(-1)).toEqual(['x', 'y']);
    await queue.close();
  });

  it('a write that lands while rows were dropped past max_queue takes out only what it wrote: no queued row is lost', async () => {
    const store = new FlakyStore();
    let land: () => void = () => {};
    const insert = store.insertBatch.bind(store);
    store.insertBatch = (entries) => {
      const ids = entries.map((item) => item.id);
      if (ids[0] !== 'a') return insert(entries);
      // The first batch waits on the database while the queue overflows.
      return new Promise<void>((resolve) => {
        land = () => resolve(insert(entries));
      });
    };
    const queue = new RequestLogQueue(store, { batchSize: 2, flushIntervalMs: 60_000, maxQueue: 3 });
    queue.push(entry('a'));
    queue.push(entry('b'));
    for (const id of ['c', 'd', 'e']) queue.push(entry(id));
    // a and b, the batch on its way, went past the cap.
    expect(queue.dropped).toBe(2);
    land();
    await queue.close();
    expect(store.batches.flat()).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('drops the oldest rows past max_queue and counts them', async () => {
    const store = new FlakyStore();
    store.failing = true;
    const reported: number[] = [];
    const queue = new RequestLogQueue(store, {
      batchSize: 1_000,
      flushIntervalMs: 60_000,
      maxQueue: 3,
      onError: (_error, _pending, dropped) => reported.push(dropped),
    });
    for (const id of ['a', 'b', 'c', 'd', 'e']) queue.push(entry(id));
    expect(queue.dropped).toBe(2);
    await queue.flush();
    // The loss is reported with the failure, so the operator sees it in the logs.
    expect(reported).toEqual([2]);
    store.failing = false;
    await queue.close();
    expect(store.batches.flat()).toEqual(['c', 'd', 'e']);
  });

  it('flushes on its interval without being asked', async () => {
    const store = new FlakyStore();
    const queue = new RequestLogQueue(store, { batchSize: 1_000, flushIntervalMs: 10, maxQueue: 100 });
    queue.push(entry('a'));
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(store.batches).toEqual([['a']]);
    await queue.close();
  });
});
