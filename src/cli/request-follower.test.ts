import { describe, expect, it } from 'vitest';
import type { RequestLogQuery, RequestLogStore, StoredRequestLogEntry } from '../store/index.js';
import { RequestFollower, TAIL_OVERLAP_MS } from './request-follower.js';
import { parseStatus } from './requests-command.js';

function row(id: string, loggedAt: number): StoredRequestLogEntry {
  return {
    id,
    clientRequestId: null,
    createdAt: loggedAt,
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
    loggedAt,
  };
}

/** The store's contract for a tail: rows written at or after a time, oldest first, at most `limit`. */
class WrittenRows implements RequestLogStore {
  rows: StoredRequestLogEntry[] = [];
  reads = 0;
  async insertBatch(): Promise<void> {}
  async query(): Promise<StoredRequestLogEntry[]> {
    return [];
  }
  async writtenSince(loggedFrom: number, filter: RequestLogQuery = {}): Promise<StoredRequestLogEntry[]> {
    this.reads++;
    return this.rows
      .filter((candidate) => (candidate.loggedAt ?? 0) >= loggedFrom)
      .sort((a, b) => (a.loggedAt ?? 0) - (b.loggedAt ?? 0) || a.id.localeCompare(b.id))
      .slice(0, filter.limit ?? 1000);
  }
  async count(): Promise<number> {
    return this.rows.length;
  }
}

const ids = (rows: StoredRequestLogEntry[]) => rows.map((entry) => entry.id);

describe('RequestFollower', () => {
  it('returns each row once, in write order, including one that became visible late', async () => {
    const store = new WrittenRows();
    const follower = new RequestFollower(store, { limit: 100 });
    store.rows.push(row('before-start', 10_000 - TAIL_OVERLAP_MS - 1), row('just-before', 9_000));
    // The first poll starts the tail: what it finds is the overlap, not news.
    expect(ids(await follower.poll(10_000))).toEqual(['just-before']);
    store.rows.push(row('a', 11_000), row('b', 12_000));
    expect(ids(await follower.poll(12_500))).toEqual(['a', 'b']);
    expect(await follower.poll(13_000)).toEqual([]);
    // Stamped before 'b' but committed after the last poll (or written by a gateway whose clock is behind).
    store.rows.push(row('late', 11_500), row('c', 13_500));
    expect(ids(await follower.poll(14_000))).toEqual(['late', 'c']);
  });

  it('pages through more rows than one read returns, even when they share a millisecond', async () => {
    const store = new WrittenRows();
    const follower = new RequestFollower(store, { limit: 2 });
    await follower.poll(1_000_000);
    for (const id of ['r1', 'r2', 'r3', 'r4', 'r5']) store.rows.push(row(id, 1_000_100));
    store.rows.push(row('r6', 1_000_200));
    expect(ids(await follower.poll(1_000_300))).toEqual(['r1', 'r2', 'r6']);
  });

  it('forgets what no later poll can read again', async () => {
    const store = new WrittenRows();
    const follower = new RequestFollower(store, { limit: 100 });
    await follower.poll(0);
    for (let index = 0; index < 50; index++) {
      const at = index * TAIL_OVERLAP_MS;
      store.rows.push(row(`r${index}`, at));
      expect(ids(await follower.poll(at))).toEqual([`r${index}`]);
    }
    expect((follower as unknown as { seen: Map<string, number> }).seen.size).toBeLessThanOrEqual(3);
  });
});

describe('parseStatus', () => {
  it('reads a status or a class', () => {
    expect(parseStatus('429')).toEqual({ from: 429, to: 429 });
    expect(parseStatus('5xx')).toEqual({ from: 500, to: 599 });
    expect(parseStatus('4XX')).toEqual({ from: 400, to: 499 });
    expect(() => parseStatus('600')).toThrow(/expected a status/);
  });
});
