import { Type, type TObject } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toIssue, validationError } from '../../api/validation-issues.js';
import { openStores, type RequestLogEntry, type Stores } from '../../store/index.js';
import type { AdminRoute } from '../admin-route.js';
import { MAX_USAGE_ROWS, RequestQueries } from '../request-queries.js';
import { requestRoutes } from './request-routes.js';
import { requestLogEntry } from '../../../test/support/request-log-entries.js';

const HOUR = 3_600_000;
/** 2025-06-01T00:00:00Z */
const DAY_START = Date.UTC(2025, 5, 1);
const NOW = DAY_START + 10 * HOUR + 30 * 60_000;

/** The rows here carry no attempts, and a latency that shows rounding. */
const entry = (startedAt: number, overrides: Partial<RequestLogEntry> = {}): RequestLogEntry =>
  requestLogEntry(startedAt, { latencyMs: 120.04, attempts: null, ...overrides });

/** What the edge does before `handle`: query strings converted to the schema's types, then checked (422 naming the parameter). */
function checked(schema: TObject | undefined, value: Record<string, string>, where: 'query' | 'path'): Record<string, unknown> {
  const converted = Value.Convert(schema ?? Type.Object({}), { ...value }) as Record<string, unknown>;
  if (schema !== undefined && !Value.Check(schema, converted)) {
    throw validationError(
      [...Value.Errors(schema, converted)].map((error) => {
        const issue = toIssue(error);
        return { ...issue, loc: [where, ...issue.loc.slice(1)] };
      }),
    );
  }
  return converted;
}

async function call(route: AdminRoute, input: { params?: Record<string, string>; query?: Record<string, string> } = {}): Promise<unknown> {
  const params = checked(route.params, input.params ?? {}, 'path') as Record<string, string>;
  const query = checked(route.query, input.query ?? {}, 'query');
  const answer = await route.handle({ params, query, body: undefined });
  // What the OpenAPI document promises is what comes out.
  expect(Value.Errors(route.response, answer).First()).toBeUndefined();
  return answer;
}

const invalid = (param: string) => ({ status: 422, code: 'validation_error', param, detail: [expect.objectContaining({ loc: ['query', param] })] });

describe('admin request routes', () => {
  let stores: Stores;
  let routes: Record<string, AdminRoute>;
  const rows: RequestLogEntry[] = [];

  beforeAll(async () => {
    stores = await openStores('sqlite::memory:');
    for (let minute = 0; minute < 120; minute++) {
      rows.push(
        entry(DAY_START + 9 * HOUR + minute * 60_000, {
          sessionId: minute % 4 === 0 ? 'conversation-7' : null,
          tokenId: minute % 2 === 0 ? 'tok_a' : 'tok_b',
          team: minute % 3 === 0 ? 'ads' : 'search',
          model: minute % 5 === 0 ? 'claude' : 'gpt-4o-mini',
          status: minute % 10 === 9 ? 503 : 200,
          clientRequestId: minute === 7 ? 'trace-7' : null,
          affinity: minute % 4 === 0 ? (minute === 0 ? 'new' : 'kept') : null,
          attempts:
            minute === 9
              ? [
                  { credential: 'openai-a', outcome: 'upstream_timeout', status: null, ms: 3000.04 },
                  { credential: 'openai-b', outcome: 'no_upstream_available', status: 503, ms: 1 },
                ]
              : null,
        }),
      );
    }
    await stores.requestLogs.insertBatch(rows);
    routes = Object.fromEntries(requestRoutes(new RequestQueries(stores.requestSearch, () => NOW)).map((route) => [route.operationId, route]));
  });
  afterAll(async () => {
    await stores.close();
  });

  const route = (operationId: string) => routes[operationId] as AdminRoute;
  const list = async (query: Record<string, string>) =>
    (await call(route('listRequests'), { query })) as { data: Array<Record<string, unknown>>; next_cursor: string | null };
  const newestFirst = (matching: (row: RequestLogEntry) => boolean) =>
    rows
      .filter(matching)
      .map((row) => row.id)
      .reverse();

  it('describes each route once, for the edge and the OpenAPI document', () => {
    expect(requestRoutes(new RequestQueries(stores.requestSearch)).map((item) => `${item.method} ${item.path} ${item.tag}`)).toEqual([
      'GET /admin/v1/requests requests',
      'GET /admin/v1/requests/{id} requests',
      'GET /admin/v1/sessions/{id} sessions',
      'GET /admin/v1/usage usage',
    ]);
  });

  it('lists requests newest first, by each filter, in the wire format', async () => {
    const page = await list({ limit: '3' });
    expect(page.data.map((row) => row['id'])).toEqual(newestFirst(() => true).slice(0, 3));
    expect((await list({ session_id: 'conversation-7', limit: '1000' })).data.map((row) => row['id'])).toEqual(
      newestFirst((row) => row.sessionId === 'conversation-7'),
    );
    expect((await list({ token_id: 'tok_b', team: 'ads', limit: '1000' })).data.map((row) => row['id'])).toEqual(
      newestFirst((row) => row.tokenId === 'tok_b' && row.team === 'ads'),
    );
    expect((await list({ model: 'claude', status: '5xx' })).data.map((row) => row['id'])).toEqual([]);
    expect((await list({ status: '503', project: 'ranker', limit: '1000' })).data.map((row) => row['id'])).toEqual(newestFirst((row) => row.status === 503));
    const from = '2025-06-01T10:00:00Z';
    const to = '2025-06-01T12:05:00+02:00';
    expect((await list({ from, to, limit: '1000' })).data.map((row) => row['id'])).toEqual(
      newestFirst((row) => row.createdAt >= Date.parse(from) && row.createdAt < Date.parse(to)),
    );
    expect((await list({ to: '2025-06-01', limit: '1000' })).data).toEqual([]);
    const [failover] = (await list({ from: '2025-06-01T09:09:00Z', to: '2025-06-01T09:10:00Z' })).data;
    expect(failover).toEqual({
      object: 'request',
      id: rows[9]?.id,
      client_request_id: null,
      created_at: '2025-06-01T09:09:00.000Z',
      logged_at: expect.stringMatching(/Z$/),
      endpoint: 'chat.completions',
      model: 'gpt-4o-mini',
      upstream_model: 'gpt-4o-mini-2024-07-18',
      token_id: 'tok_b',
      team: 'ads',
      project: 'ranker',
      client_address: '127.0.0.1',
      worker: null,
      session_id: null,
      session_source: null,
      affinity: null,
      upstream: 'openai-a',
      status: 503,
      error_code: null,
      latency_ms: 120,
      ttfb_ms: 30,
      prompt_tokens: 10,
      cached_tokens: 2,
      cache_write_tokens: null,
      completion_tokens: 5,
      reasoning_tokens: null,
      usage_source: 'upstream',
      cost_usd: 0.001,
      attempts: [
        { credential: 'openai-a', outcome: 'upstream_timeout', status: null, ms: 3000 },
        { credential: 'openai-b', outcome: 'no_upstream_available', status: 503, ms: 1 },
      ],
    });
  });

  it('pages with the cursor until next_cursor is null, each request once', async () => {
    const seen: unknown[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await list({ token_id: 'tok_a', limit: '7', ...(cursor === null ? {} : { cursor }) });
      seen.push(...page.data.map((row) => row['id']));
      cursor = page.next_cursor;
      pages += 1;
    } while (cursor !== null);
    expect(seen).toEqual(newestFirst((row) => row.tokenId === 'tok_a'));
    expect(pages).toBe(Math.ceil(60 / 7));
    // A page that ends exactly at the last request says so: no cursor to an empty page.
    expect((await list({ token_id: 'tok_a', limit: '60' })).next_cursor).toBeNull();
  });

  it('refuses a malformed cursor and a page size over 1,000 with 422 naming the parameter', async () => {
    for (const cursor of [
      '!!!',
      'bm90IGpzb24',
      Buffer.from('{"id":1}').toString('base64url'),
      `${Buffer.from(JSON.stringify('req_1')).toString('base64url')}=`,
    ]) {
      await expect(list({ cursor })).rejects.toMatchObject(invalid('cursor'));
      await expect(call(route('getSession'), { params: { id: 'conversation-7' }, query: { cursor } })).rejects.toMatchObject(invalid('cursor'));
    }
    await expect(list({ limit: '1001' })).rejects.toMatchObject({ ...invalid('limit'), message: 'limit: Input should be less than or equal to 1000' });
    await expect(list({ limit: '0' })).rejects.toMatchObject(invalid('limit'));
    await expect(call(route('getSession'), { params: { id: 'conversation-7' }, query: { limit: '5000' } })).rejects.toMatchObject(invalid('limit'));
    // The service checks on its own too: the CLI calls it without the edge's schema check.
    await expect(route('listRequests').handle({ params: {}, query: { limit: 5000 }, body: undefined })).rejects.toMatchObject(invalid('limit'));
  });

  it('refuses times, statuses and parameters it cannot read', async () => {
    await expect(list({ from: '2025-06-01T10:00:00' })).rejects.toMatchObject(invalid('from'));
    await expect(list({ from: 'yesterday' })).rejects.toMatchObject(invalid('from'));
    await expect(route('listRequests').handle({ params: {}, query: { to: '2025-02-30' }, body: undefined })).rejects.toMatchObject(invalid('to'));
    await expect(list({ from: '2025-06-02', to: '2025-06-01' })).rejects.toMatchObject({ ...invalid('to'), message: 'to: Input should be after from' });
    await expect(list({ status: '5x' })).rejects.toMatchObject(invalid('status'));
    await expect(route('listRequests').handle({ params: {}, query: { status: '600' }, body: undefined })).rejects.toMatchObject(invalid('status'));
    await expect(list({ sesion_id: 'conversation-7' })).rejects.toMatchObject({ status: 422, code: 'validation_error' });
  });

  it("reads one request in full by the gateway's id or the caller's, and 404s an unknown one", async () => {
    const byId = (await call(route('getRequest'), { params: { id: rows[9]?.id as string } })) as Record<string, unknown>;
    expect(byId).toMatchObject({ object: 'request', id: rows[9]?.id, attempts: [{ credential: 'openai-a' }, { credential: 'openai-b' }] });
    expect(await call(route('getRequest'), { params: { id: 'trace-7' } })).toMatchObject({ id: rows[7]?.id, client_request_id: 'trace-7' });
    await expect(call(route('getRequest'), { params: { id: 'req_missing' } })).rejects.toMatchObject({ status: 404, code: 'request_not_found', param: 'id' });
  });

  it("reads a session's turns oldest first, paged, and 404s a session without requests", async () => {
    const turnIds = rows.filter((row) => row.sessionId === 'conversation-7').map((row) => row.id);
    const first = (await call(route('getSession'), { params: { id: 'conversation-7' }, query: { limit: '20' } })) as {
      turns: Array<Record<string, unknown>>;
      next_cursor: string;
    };
    expect(first.turns.map((turn) => turn['id'])).toEqual(turnIds.slice(0, 20));
    expect(first.turns.slice(0, 2).map((turn) => turn['affinity'])).toEqual(['new', 'kept']);
    const rest = (await call(route('getSession'), { params: { id: 'conversation-7' }, query: { cursor: first.next_cursor } })) as {
      id: string;
      turns: Array<{ id: string }>;
      next_cursor: null;
    };
    expect(rest).toMatchObject({ object: 'session', id: 'conversation-7', next_cursor: null });
    expect(rest.turns.map((turn) => turn.id)).toEqual(turnIds.slice(20));
    await expect(call(route('getSession'), { params: { id: 'conversation-0' } })).rejects.toMatchObject({ status: 404, code: 'session_not_found' });
  });

  it('totals usage per UTC bucket and group over a range, the last 24 buckets unless given', async () => {
    const hourly = (await call(route('getUsage'), { query: { bucket: 'hour', group_by: 'team' } })) as {
      from: string;
      to: string;
      data: Array<Record<string, unknown>>;
    };
    expect(hourly.from).toBe('2025-05-31T11:00:00.000Z');
    expect(hourly.to).toBe(new Date(NOW).toISOString());
    expect(hourly.data.map((row) => [row['start'], row['team'], row['requests']])).toEqual([
      ['2025-06-01T09:00:00.000Z', 'ads', 20],
      ['2025-06-01T09:00:00.000Z', 'search', 40],
      // No \`to\`: the hour under way is read whole, from the rollup, with the rows stamped after
      // NOW (10:30) that this log has (a replica whose clock is ahead would write such rows).
      ['2025-06-01T10:00:00.000Z', 'ads', 20],
      ['2025-06-01T10:00:00.000Z', 'search', 40],
    ]);
    // With \`to\` the range ends there, within the hour: its rows up to then.
    const until = (await call(route('getUsage'), { query: { bucket: 'hour', group_by: 'team', to: new Date(NOW).toISOString() } })) as {
      data: Array<Record<string, unknown>>;
    };
    expect(until.data.slice(2).map((row) => [row['start'], row['team'], row['requests']])).toEqual([
      ['2025-06-01T10:00:00.000Z', 'ads', 10],
      ['2025-06-01T10:00:00.000Z', 'search', 20],
    ]);
    const daily = (await call(route('getUsage'), { query: { from: '2025-06-01', to: '2025-06-02', group_by: 'model', team: 'search' } })) as {
      data: Array<Record<string, unknown>>;
    };
    expect(daily.data).toEqual([
      {
        start: '2025-06-01T00:00:00.000Z',
        model: 'claude',
        requests: 16,
        errors: 0,
        prompt_tokens: 160,
        completion_tokens: 80,
        cached_tokens: 32,
        cost_usd: expect.closeTo(0.016, 9),
      },
      {
        start: '2025-06-01T00:00:00.000Z',
        model: 'gpt-4o-mini',
        requests: 64,
        errors: 8,
        prompt_tokens: 640,
        completion_tokens: 320,
        cached_tokens: 128,
        cost_usd: expect.closeTo(0.064, 9),
      },
    ]);
  });

  it('refuses a usage range of more than 1,000 buckets, and an answer of more than 10,000 rows', async () => {
    await expect(call(route('getUsage'), { query: { bucket: 'hour', from: '2025-01-01', to: '2025-06-01' } })).rejects.toMatchObject(invalid('from'));
    await expect(call(route('getUsage'), { query: { bucket: 'week' } })).rejects.toMatchObject({ status: 422, param: 'bucket' });
    const crowd = await openStores('sqlite::memory:');
    try {
      await crowd.requestLogs.insertBatch(Array.from({ length: MAX_USAGE_ROWS + 1 }, (_, index) => entry(DAY_START + index, { tokenId: `tok_${index}` })));
      const usage = requestRoutes(new RequestQueries(crowd.requestSearch, () => NOW)).find((item) => item.operationId === 'getUsage') as AdminRoute;
      await expect(call(usage, { query: { group_by: 'token' } })).rejects.toMatchObject(invalid('group_by'));
      expect(await call(usage, { query: { group_by: 'team' } })).toMatchObject({ data: [{ team: 'search', requests: MAX_USAGE_ROWS + 1 }] });
    } finally {
      await crowd.close();
    }
  });
});
