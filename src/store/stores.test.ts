import { afterEach, beforeEach, expect, it } from 'vitest';
import { describeEachBackend } from '../../test/support/database-backends.js';
import type { RequestLogEntry, Stores, TokenRecord } from './index.js';

function token(overrides: Partial<TokenRecord> = {}): TokenRecord {
  return {
    id: 'tok_1',
    name: 'ci',
    team: 'search',
    project: 'ranker',
    secretHash: 'a'.repeat(64),
    displayPrefix: 'svc_abcd',
    scopes: ['chat', 'models:read'],
    models: ['gpt-4o-mini'],
    createdAt: 1_700_000_000_000,
    expiresAt: 1_800_000_000_000,
    revokedAt: null,
    limits: {},
    ...overrides,
  };
}

function logEntry(id: string, createdAt: number, overrides: Partial<RequestLogEntry> = {}): RequestLogEntry {
  return {
    id,
    clientRequestId: null,
    createdAt,
    tokenId: 'tok_1',
    team: 'search',
    project: null,
    endpoint: '/v1/chat/completions',
    model: 'gpt-4o-mini',
    upstream: 'openai-a',
    upstreamModel: 'gpt-4o-mini-2024-07-18',
    sessionId: 'session-1',
    status: 200,
    latencyMs: 12.5,
    ttfbMs: 3.25,
    promptTokens: 10,
    completionTokens: 20,
    cachedTokens: 4,
    cacheWriteTokens: null,
    reasoningTokens: 8,
    costUsd: 0.00125,
    clientAddress: '203.0.113.7',
    worker: 3,
    usageSource: 'upstream',
    errorCode: null,
    sessionSource: 'header',
    affinity: 'moved',
    attempts: [
      { credential: 'openai-b', outcome: 'upstream_rate_limited', status: 429, ms: 12.5 },
      { credential: 'openai-a', outcome: 'ok', status: 200, ms: 310 },
    ],
    ...overrides,
  };
}

describeEachBackend('stores', (backend) => {
  let stores: Stores;
  let dispose: () => Promise<void>;

  beforeEach(async () => {
    ({ stores, dispose } = await backend.open());
    // A token's project must exist in its team.
    await stores.teams.insertTeam({ id: 'search', name: 'Search', limits: {}, createdAt: 1, updatedAt: 1 });
    await stores.teams.insertProject({ team: 'search', id: 'ranker', name: 'Ranker', limits: {}, createdAt: 1, updatedAt: 1 });
  });
  afterEach(async () => {
    await dispose();
  });

  it('stores tokens and reads them back exactly', async () => {
    const record = token();
    await stores.tokens.insert(record);
    await stores.tokens.insert(token({ id: 'tok_2', secretHash: 'b'.repeat(64), models: null, project: null, expiresAt: null }));
    expect(await stores.tokens.findById('tok_1')).toEqual(record);
    const listed = await stores.tokens.list();
    expect(listed.map((item) => item.id)).toEqual(['tok_1', 'tok_2']);
    expect(listed[1]).toMatchObject({ models: null, project: null, expiresAt: null });
    expect(await stores.tokens.findById('tok_missing')).toBeNull();
  });

  it('refuses a second token with the same secret hash', async () => {
    await stores.tokens.insert(token());
    await expect(stores.tokens.insert(token({ id: 'tok_2' }))).rejects.toThrow();
    expect((await stores.tokens.list()).length).toBe(1);
  });

  it('revokes once, keeps the first revocation time, and bumps the revision on each change', async () => {
    const start = await stores.tokens.readRevision();
    await stores.tokens.insert(token());
    expect(await stores.tokens.readRevision()).toBe(start + 1);
    expect(await stores.tokens.revoke('tok_1', 1_750_000_000_000)).toBe(true);
    expect(await stores.tokens.revoke('tok_1', 1_760_000_000_000)).toBe(true);
    expect((await stores.tokens.findById('tok_1'))?.revokedAt).toBe(1_750_000_000_000);
    expect(await stores.tokens.readRevision()).toBe(start + 2);
    expect(await stores.tokens.revoke('tok_missing', 1)).toBe(false);
    expect(await stores.tokens.readRevision()).toBe(start + 2);
  });

  it('writes request log batches and queries them newest first', async () => {
    const entries = Array.from({ length: 250 }, (_, index) =>
      logEntry(
        `req_${String(index).padStart(3, '0')}`,
        1_700_000_000_000 + index,
        index % 2 === 0 ? {} : { sessionId: 'session-2', ttfbMs: null, usageSource: 'estimated', sessionSource: null, affinity: null, attempts: null },
      ),
    );
    await stores.requestLogs.insertBatch(entries);
    await stores.requestLogs.insertBatch([]);
    expect(await stores.requestLogs.count()).toBe(250);
    const newest = await stores.requestLogs.query({ limit: 2 });
    expect(newest.map((entry) => entry.id)).toEqual(['req_249', 'req_248']);
    expect(newest[0]).toEqual({ ...entries[249], loggedAt: expect.any(Number) });
    const session = await stores.requestLogs.query({ sessionId: 'session-1', limit: 500 });
    expect(session).toHaveLength(125);
    expect(session.every((entry) => entry.sessionId === 'session-1')).toBe(true);
  });

  it('filters by status range and follows rows in the order they were written', async () => {
    const before = Date.now();
    // A stream that started first (smaller id) but ended, and was written, after a short request.
    await stores.requestLogs.insertBatch([logEntry('req_b', 2, { status: 502, errorCode: 'upstream_unavailable' })]);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const between = Date.now();
    await stores.requestLogs.insertBatch([logEntry('req_a', 1), logEntry('req_c', 3, { status: 429 })]);
    expect((await stores.requestLogs.query({ status: { from: 500, to: 599 } })).map((entry) => entry.id)).toEqual(['req_b']);
    expect((await stores.requestLogs.query({ status: { from: 429, to: 429 } })).map((entry) => entry.id)).toEqual(['req_c']);
    expect((await stores.requestLogs.writtenSince(before)).map((entry) => entry.id)).toEqual(['req_b', 'req_a', 'req_c']);
    expect((await stores.requestLogs.writtenSince(between)).map((entry) => entry.id)).toEqual(['req_a', 'req_c']);
    expect((await stores.requestLogs.writtenSince(before, { status: { from: 200, to: 299 } })).map((entry) => entry.id)).toEqual(['req_a']);
    const [written] = await stores.requestLogs.writtenSince(between, { limit: 1 });
    expect(written?.loggedAt).toBeGreaterThanOrEqual(between);
  });

  it('finds a row by the gateway id or by the caller id, which may repeat', async () => {
    await stores.requestLogs.insertBatch([
      logEntry('req_c1', 1, { clientRequestId: 'trace-1' }),
      logEntry('req_c2', 2, { clientRequestId: 'trace-1' }),
      logEntry('req_c3', 3),
    ]);
    expect((await stores.requestLogs.query({ requestId: 'trace-1' })).map((entry) => entry.id)).toEqual(['req_c2', 'req_c1']);
    expect((await stores.requestLogs.query({ requestId: 'req_c3' })).map((entry) => entry.id)).toEqual(['req_c3']);
    expect(await stores.requestLogs.query({ requestId: 'trace-2' })).toEqual([]);
  });

  it('keeps a batch atomic: a duplicate id writes none of the batch', async () => {
    await stores.requestLogs.insertBatch([logEntry('req_a', 1)]);
    // The same request's row again. (On PostgreSQL the key is (id, created_at): a partitioned table's key holds its partition key.)
    await expect(stores.requestLogs.insertBatch([logEntry('req_b', 2), logEntry('req_a', 1)])).rejects.toThrow();
    expect((await stores.requestLogs.query()).map((entry) => entry.id)).toEqual(['req_a']);
  });
});
