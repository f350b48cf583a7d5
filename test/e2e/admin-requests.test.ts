import { Value } from '@sinclair/typebox/value';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startOpenAIFakeGateway, type OpenAIFakeGateway } from '../support/start-openai-fake-gateway.js';
import { describeEachBackend } from '../support/database-backends.js';

interface Answer {
  status: number;
  body: Record<string, unknown> & { error?: { code: string; param: string | null }; detail?: Array<{ loc: unknown[] }> };
}

type Listed = { data: Array<Record<string, unknown> & { id: string }>; next_cursor: string | null };

describeEachBackend("the admin API's requests, sessions and usage", (backend) => {
  let harness: OpenAIFakeGateway;
  let drop: () => Promise<void>;
  let adminToken: string;
  /** Request ids, oldest first, by who sent them. */
  const search: string[] = [];
  const ads: string[] = [];
  const tokenIds: Record<string, string> = {};
  let between = 0;
  let after = 0;

  async function chat(token: string, headers: Record<string, string>, model = 'gpt-4o-mini'): Promise<string> {
    const response = await fetch(`${harness.gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    await response.arrayBuffer();
    // The header echoes the caller's own id when it sent one; the row has the gateway's.
    return (await harness.logRow(response.headers.get('x-request-id'))).id;
  }

  async function admin(path: string): Promise<Answer> {
    const response = await fetch(`${harness.gateway.url}/admin/v1${path}`, { headers: { authorization: `Bearer ${adminToken}` } });
    return { status: response.status, body: (await response.json()) as Answer['body'] };
  }

  /** A 200 whose body is what the route's schema (and the OpenAPI document) says. */
  async function conforming(operationId: string, path: string): Promise<Answer['body']> {
    const answer = await admin(path);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const route = harness.gateway.adminRoutes.find((candidate) => candidate.operationId === operationId);
    expect([...Value.Errors(route?.response as never, answer.body)].map((error) => `${error.path} ${error.message}`)).toEqual([]);
    return answer.body;
  }

  const list = async (query: string) => (await conforming('listRequests', `/requests?${query}`)) as unknown as Listed;
  const newestFirst = (ids: readonly string[]) => [...ids].reverse();

  beforeAll(async () => {
    const database = await backend.empty();
    drop = database.dispose;
    harness = await startOpenAIFakeGateway({ databaseUrl: database.url });
    adminToken = await harness.createToken({ team: 'ops', scopes: ['admin'] });
    const searchToken = await harness.createToken({ team: 'search' });
    const adsToken = await harness.createToken({ team: 'ads' });
    for (let turn = 0; turn < 3; turn++) search.push(await chat(searchToken, { 'x-session-id': 'conversation-1' }));
    search.push(await chat(searchToken, { 'x-request-id': 'trace-42' }));
    await new Promise((resolve) => setTimeout(resolve, 5));
    between = Date.now();
    for (let turn = 0; turn < 2; turn++) ads.push(await chat(adsToken, { 'x-session-id': 'conversation-2' }));
    ads.push(await chat(adsToken, {}, 'no-such-model'));
    after = Date.now() + 1;
    tokenIds['search'] = (await harness.logRow(search[0] as string)).tokenId as string;
    tokenIds['ads'] = (await harness.logRow(ads[0] as string)).tokenId as string;
  });
  afterAll(async () => {
    await harness.close();
    await drop();
  });

  it('finds requests by session id, token and time range, newest first', async () => {
    expect((await list('session_id=conversation-1')).data.map((row) => row.id)).toEqual(newestFirst(search.slice(0, 3)));
    expect((await list(`token_id=${tokenIds['search']}`)).data.map((row) => row.id)).toEqual(newestFirst(search));
    const range = await list(`from=${new Date(between).toISOString()}&to=${new Date(after).toISOString()}`);
    expect(range.data.map((row) => row.id)).toEqual(newestFirst(ads));
    expect((await list('team=ads&status=4xx')).data.map((row) => ({ id: row.id, error_code: row['error_code'] }))).toEqual([
      { id: ads[2], error_code: 'model_not_found' },
    ]);
  });

  it('pages through every request with the cursor, each once', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Listed = await list(`limit=2${cursor === null ? '' : `&cursor=${cursor}`}`);
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.data.map((row) => row.id));
      cursor = page.next_cursor;
    } while (cursor !== null);
    expect(seen).toEqual(newestFirst([...search, ...ads]));
  });

  it('refuses a page size over 1,000 and a malformed cursor with 422 naming the parameter', async () => {
    for (const [query, param] of [
      ['limit=1001', 'limit'],
      ['cursor=not-a-cursor', 'cursor'],
      ['from=yesterday', 'from'],
      ['status=5x', 'status'],
      ['sesion_id=conversation-1', 'sesion_id'],
    ] as const) {
      const answer = await admin(`/requests?${query}`);
      expect(answer.status, query).toBe(422);
      expect(answer.body.error?.code).toBe('validation_error');
      expect(answer.body.detail?.[0]?.loc).toEqual(['query', param]);
    }
    const turns = await admin('/sessions/conversation-1?limit=5000');
    expect([turns.status, turns.body.error?.param]).toEqual([422, 'limit']);
  });

  it("reads one request in full with its attempts, by the gateway's id or the caller's", async () => {
    const request = await conforming('getRequest', `/requests/${search[0] as string}`);
    expect(request).toMatchObject({
      object: 'request',
      id: search[0],
      endpoint: 'chat.completions',
      model: 'gpt-4o-mini',
      token_id: tokenIds['search'],
      team: 'search',
      session_id: 'conversation-1',
      session_source: 'header',
      affinity: 'new',
      upstream: 'primary',
      status: 200,
      usage_source: 'upstream',
      attempts: [{ credential: 'primary', outcome: 'ok', status: 200, ms: expect.any(Number) }],
    });
    expect(request['created_at']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(await conforming('getRequest', '/requests/trace-42')).toMatchObject({ id: search[3], client_request_id: 'trace-42' });
    const missing = await admin('/requests/req_nothing');
    expect([missing.status, missing.body.error?.code]).toEqual([404, 'request_not_found']);
  });

  it("reads a session's turns in order, and 404s a session without requests", async () => {
    const session = await conforming('getSession', '/sessions/conversation-1');
    expect(session).toMatchObject({ object: 'session', id: 'conversation-1', next_cursor: null });
    const turns = session['turns'] as Array<Record<string, unknown>>;
    expect(turns.map((turn) => [turn['id'], turn['affinity'], turn['upstream'], turn['status']])).toEqual([
      [search[0], 'new', 'primary', 200],
      [search[1], 'kept', 'primary', 200],
      [search[2], 'kept', 'primary', 200],
    ]);
    expect(turns.every((turn) => typeof turn['prompt_tokens'] === 'number' && typeof turn['latency_ms'] === 'number')).toBe(true);
    const paged = (await conforming('getSession', '/sessions/conversation-1?limit=2')) as { turns: Array<{ id: string }>; next_cursor: string };
    const rest = (await conforming('getSession', `/sessions/conversation-1?cursor=${paged.next_cursor}`)) as { turns: Array<{ id: string }> };
    expect([...paged.turns, ...rest.turns].map((turn) => turn.id)).toEqual(search.slice(0, 3));
    const missing = await admin('/sessions/conversation-0');
    expect([missing.status, missing.body.error?.code]).toEqual([404, 'session_not_found']);
  });

  it('totals usage per hour by team and per day by token', async () => {
    const byTeam = (await conforming('getUsage', '/usage?bucket=hour&group_by=team')) as { data: Array<Record<string, unknown>> };
    const totals = (team: string) => byTeam.data.filter((row) => row['team'] === team).reduce((sum, row) => sum + (row['requests'] as number), 0);
    expect([totals('search'), totals('ads')]).toEqual([4, 3]);
    const adsErrors = byTeam.data.filter((row) => row['team'] === 'ads').reduce((sum, row) => sum + (row['errors'] as number), 0);
    expect(adsErrors).toBe(1);
    const byToken = (await conforming('getUsage', `/usage?bucket=day&group_by=token&token_id=${tokenIds['search']}`)) as {
      data: Array<Record<string, unknown>>;
    };
    expect(byToken.data.reduce((sum, row) => sum + (row['requests'] as number), 0)).toBe(4);
    expect(byToken.data.every((row) => row['token_id'] === tokenIds['search'] && (row['prompt_tokens'] as number) > 0)).toBe(true);
  });
});
