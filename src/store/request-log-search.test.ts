import { afterEach, beforeEach, expect, it } from 'vitest';
import { describeEachBackend } from '../../test/support/database-backends.js';
import { requestIdAt, requestLogEntry } from '../../test/support/request-log-entries.js';
import type { Stores } from './index.js';

const HOUR = 3_600_000;
/** 2025-06-01T00:00:00Z */
const DAY_START = Date.UTC(2025, 5, 1);

const entry = requestLogEntry;
const requestId = requestIdAt;

const ids = (rows: ReadonlyArray<{ id: string }>) => rows.map((row) => row.id);

describeEachBackend('request log search', (backend) => {
  let stores: Stores;
  let dispose: () => Promise<void>;

  beforeEach(async () => {
    ({ stores, dispose } = await backend.open());
  });
  afterEach(async () => {
    await dispose();
  });

  it('filters by each column, newest first, and pages on from the id before', async () => {
    const rows = [
      entry(DAY_START + 1_000, { sessionId: 's-1' }),
      entry(DAY_START + 2_000, { tokenId: 'tok_b', team: 'ads', project: null }),
      entry(DAY_START + 3_000, { model: 'claude', status: 502, errorCode: 'upstream_error' }),
      entry(DAY_START + 4_000, { sessionId: 's-1', status: 429, errorCode: 'rate_limit_exceeded' }),
      entry(DAY_START + 5_000, { project: 'indexer' }),
    ];
    await stores.requestLogs.insertBatch(rows);
    const search = stores.requestSearch;
    const [r0, r1, r2, r3, r4] = ids(rows);
    expect(ids(await search.search({}, { limit: 10 }))).toEqual([r4, r3, r2, r1, r0]);
    expect(ids(await search.search({ sessionId: 's-1' }, { limit: 10 }))).toEqual([r3, r0]);
    expect(ids(await search.search({ tokenId: 'tok_b' }, { limit: 10 }))).toEqual([r1]);
    expect(ids(await search.search({ team: 'search' }, { limit: 10 }))).toEqual([r4, r3, r2, r0]);
    expect(ids(await search.search({ team: 'search', project: 'ranker' }, { limit: 10 }))).toEqual([r3, r2, r0]);
    expect(ids(await search.search({ model: 'claude' }, { limit: 10 }))).toEqual([r2]);
    expect(ids(await search.search({ status: { from: 400, to: 599 } }, { limit: 10 }))).toEqual([r3, r2]);
    expect(ids(await search.search({ status: { from: 429, to: 429 }, sessionId: 's-1' }, { limit: 10 }))).toEqual([r3]);
    expect(ids(await search.search({}, { limit: 2 }))).toEqual([r4, r3]);
    expect(ids(await search.search({}, { before: r3 as string, limit: 2 }))).toEqual([r2, r1]);
    expect(ids(await search.search({ team: 'search' }, { before: r2 as string, limit: 2 }))).toEqual([r0]);
    expect(await search.search({ team: 'nobody' }, { limit: 10 })).toEqual([]);
    expect((await search.search({ tokenId: 'tok_b' }, { limit: 1 }))[0]).toEqual({ ...rows[1], loggedAt: expect.any(Number) });
  });

  it('takes a time range as [from, to) of when requests started, exact at the edges', async () => {
    const from = DAY_START + HOUR;
    const to = DAY_START + 2 * HOUR;
    const rows = [
      entry(from - 1),
      // Its id was made in the millisecond before `from`, its record in the next one: it started at `from`.
      { ...entry(from), id: requestId(from - 1, 999) },
      entry(from + 10),
      entry(to - 1),
      { ...entry(to), id: requestId(to - 1, 998) },
      entry(to),
    ];
    await stores.requestLogs.insertBatch(rows);
    const search = stores.requestSearch;
    expect(ids(await search.search({ from, to }, { limit: 10 }))).toEqual([rows[3]?.id, rows[2]?.id, rows[1]?.id]);
    expect(ids(await search.search({ from: to }, { limit: 10 })).sort()).toEqual([rows[4]?.id, rows[5]?.id].sort());
    expect(ids(await search.search({ to: from }, { limit: 10 }))).toEqual([rows[0]?.id]);
    expect(ids(await search.search({ from, to, tokenId: 'tok_a' }, { limit: 2 }))).toEqual([rows[3]?.id, rows[2]?.id]);
  });

  it('sums what a token, team or project spent in a period (what quotas are rebuilt from), at the same edges', async () => {
    const from = DAY_START + HOUR;
    const to = DAY_START + 2 * HOUR;
    await stores.requestLogs.insertBatch([
      entry(from - 1),
      { ...entry(from), id: requestId(from - 1, 997) },
      entry(from + 10, { promptTokens: 100, completionTokens: null, costUsd: 0.5 }),
      entry(from + 20, { team: 'other', tokenId: 'tok_b', project: null }),
      entry(from + 30, { promptTokens: null, completionTokens: null, costUsd: null, status: 422 }),
      entry(to),
    ]);
    const search = stores.requestSearch;
    expect(await search.spent({ tokenId: 'tok_a', from, to })).toEqual({ tokens: 15 + 100, usd: 0.001 + 0.5 });
    expect(await search.spent({ team: 'search', project: 'ranker', from, to })).toEqual({ tokens: 115, usd: 0.501 });
    expect(await search.spent({ team: 'other', from, to })).toEqual({ tokens: 15, usd: 0.001 });
    expect(await search.spent({ team: 'nobody', from, to })).toEqual({ tokens: 0, usd: 0 });
  });

  it("tells when each token's newest request started, in a statement (and one per day of their last use)", async () => {
    await stores.requestLogs.insertBatch([
      entry(DAY_START + 5_000, { tokenId: 'tok_a' }),
      entry(DAY_START + 9_000, { tokenId: 'tok_a' }),
      entry(DAY_START + 1_000, { tokenId: 'tok_b' }),
      entry(DAY_START + 20_000, { tokenId: null }),
    ]);
    const found = await stores.requestSearch.lastUsed(['tok_a', 'tok_b', 'tok_never', 'tok_a']);
    expect(found).toEqual(
      new Map([
        ['tok_a', DAY_START + 9_000],
        ['tok_b', DAY_START + 1_000],
      ]),
    );
    expect(await stores.requestSearch.lastUsed([])).toEqual(new Map());
    // A full page of the token list (1,000 ids) is one statement too.
    const many = Array.from({ length: 1_000 }, (_, index) => `tok_${index}`);
    expect((await stores.requestSearch.lastUsed([...many, 'tok_b'])).get('tok_b')).toBe(DAY_START + 1_000);
  });

  it("finds a request by the gateway's id, else by the caller's id (its newest request)", async () => {
    const rows = [entry(DAY_START, { clientRequestId: 'trace-1' }), entry(DAY_START + 1, { clientRequestId: 'trace-1' }), entry(DAY_START + 2)];
    await stores.requestLogs.insertBatch(rows);
    expect((await stores.requestSearch.find(rows[2]?.id as string))?.id).toBe(rows[2]?.id);
    expect((await stores.requestSearch.find('trace-1'))?.id).toBe(rows[1]?.id);
    expect(await stores.requestSearch.find('trace-2')).toBeNull();
    // A row whose start is not its id's millisecond (written by hand, or a clock that moved) is found too.
    const odd = { ...entry(DAY_START + 60_000), id: requestId(DAY_START, 990) };
    await stores.requestLogs.insertBatch([odd]);
    expect((await stores.requestSearch.find(odd.id))?.createdAt).toBe(DAY_START + 60_000);
  });

  it("reads a session's turns oldest first, on from a turn", async () => {
    const rows = [1, 2, 3, 4].map((second) =>
      entry(DAY_START + second * 1_000, { sessionId: second === 3 ? 'other' : 's-9', affinity: second === 1 ? 'new' : 'kept' }),
    );
    await stores.requestLogs.insertBatch(rows);
    const turns = await stores.requestSearch.sessionTurns('s-9', { limit: 10 });
    expect(ids(turns)).toEqual([rows[0]?.id, rows[1]?.id, rows[3]?.id]);
    expect(turns.map((turn) => turn.affinity)).toEqual(['new', 'kept', 'kept']);
    expect(ids(await stores.requestSearch.sessionTurns('s-9', { after: rows[0]?.id as string, limit: 1 }))).toEqual([rows[1]?.id]);
    expect(await stores.requestSearch.sessionTurns('nobody', { limit: 10 })).toEqual([]);
  });

  it('totals usage per UTC hour and day, by team, token, project or model, in SQL', async () => {
    await stores.requestLogs.insertBatch([
      entry(DAY_START + 5 * 60_000),
      entry(DAY_START + 50 * 60_000, { status: 429, promptTokens: null, completionTokens: null, cachedTokens: null, costUsd: null }),
      entry(DAY_START + HOUR + 1, { team: 'ads', tokenId: 'tok_b', project: null, costUsd: null }),
      entry(DAY_START + HOUR + 2, {
        team: null,
        tokenId: null,
        project: null,
        model: null,
        status: 401,
        promptTokens: null,
        completionTokens: null,
        cachedTokens: null,
        costUsd: null,
      }),
      entry(DAY_START + 25 * HOUR, { model: 'claude', status: 502 }),
      // Outside the range.
      entry(DAY_START - 1),
    ]);
    const range = { from: DAY_START, to: DAY_START + 2 * 24 * HOUR, limit: 100 };
    const hourly = await stores.requestSearch.usage({ ...range, bucketMs: HOUR, groupBy: 'team' });
    expect(hourly).toEqual([
      { start: DAY_START, group: { team: 'search' }, requests: 2, errors: 1, promptTokens: 10, completionTokens: 5, cachedTokens: 2, costUsd: 0.001 },
      { start: DAY_START + HOUR, group: { team: 'ads' }, requests: 1, errors: 0, promptTokens: 10, completionTokens: 5, cachedTokens: 2, costUsd: null },
      { start: DAY_START + HOUR, group: { team: null }, requests: 1, errors: 1, promptTokens: 0, completionTokens: 0, cachedTokens: 0, costUsd: null },
      {
        start: DAY_START + 25 * HOUR,
        group: { team: 'search' },
        requests: 1,
        errors: 1,
        promptTokens: 10,
        completionTokens: 5,
        cachedTokens: 2,
        costUsd: 0.001,
      },
    ]);
    const daily = await stores.requestSearch.usage({ ...range, bucketMs: 24 * HOUR, groupBy: 'model' });
    expect(daily.map((row) => [row.start, row.group, row.requests, row.errors])).toEqual([
      [DAY_START, { model: 'gpt-4o-mini' }, 3, 1],
      [DAY_START, { model: null }, 1, 1],
      [DAY_START + 24 * HOUR, { model: 'claude' }, 1, 1],
    ]);
    const byProject = await stores.requestSearch.usage({ ...range, bucketMs: 24 * HOUR, groupBy: 'project' });
    expect(byProject.map((row) => [row.group, row.requests])).toEqual([
      [{ team: 'ads', project: null }, 1],
      [{ team: 'search', project: 'ranker' }, 2],
      [{ team: null, project: null }, 1],
      [{ team: 'search', project: 'ranker' }, 1],
    ]);
    const byToken = await stores.requestSearch.usage({ ...range, bucketMs: 24 * HOUR, groupBy: 'token', filter: { team: 'search' } });
    expect(byToken.map((row) => [row.start, row.group, row.requests, row.costUsd])).toEqual([
      [DAY_START, { token_id: 'tok_a' }, 2, 0.001],
      [DAY_START + 24 * HOUR, { token_id: 'tok_a' }, 1, 0.001],
    ]);
    expect(await stores.requestSearch.usage({ ...range, bucketMs: HOUR, groupBy: 'team', limit: 2 })).toHaveLength(2);
  });
});
