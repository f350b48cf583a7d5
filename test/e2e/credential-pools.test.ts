import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../fake-upstreams/openai-upstream.js';
import { resetCredentials } from '../support/reset-credentials.js';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';

/**
 * Credential pools through the official SDK: failover is invisible but for the headers and the
 * latency, sessions stay on their credential and move once, and every decision can be read in the
 * request log and in `GET /admin/v1/credentials`. One fake upstream per credential, so each can
 * fail on its own.
 */
let upstreams: Record<'a' | 'b' | 'c' | 'slow', FakeOpenAIUpstream>;
let running: TestGateway;
let adminToken: string;
const logLines: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  upstreams = {
    a: await startFakeOpenAIUpstream(),
    b: await startFakeOpenAIUpstream(),
    c: await startFakeOpenAIUpstream(),
    slow: await startFakeOpenAIUpstream({ firstByteDelayMs: 2_000 }),
  };
  running = await startTestGateway(
    {
      upstreams: [
        { id: 'cred-a', provider: 'openai', base_url: upstreams.a.url, api_key: 'sk-a' },
        { id: 'cred-b', provider: 'openai', base_url: upstreams.b.url, api_key: 'sk-b' },
        { id: 'cred-c', provider: 'openai', base_url: upstreams.c.url, api_key: 'sk-c', max_in_flight: 1 },
        { id: 'cred-slow', provider: 'openai', base_url: upstreams.slow.url, api_key: 'sk-slow', timeouts: { first_byte_ms: 200 } },
        // The same slow upstream with a patient first byte but a short whole call.
        { id: 'cred-total', provider: 'openai', base_url: upstreams.slow.url, api_key: 'sk-total', timeouts: { total_ms: 250 } },
      ],
      models: [
        {
          id: 'ordered-chat',
          type: 'chat',
          strategy: 'ordered',
          routes: [
            { upstream: 'cred-a', model: 'gpt-4o-mini', priority: 0 },
            { upstream: 'cred-b', model: 'gpt-4o-mini', priority: 1 },
          ],
        },
        {
          id: 'slow-first',
          type: 'chat',
          strategy: 'ordered',
          routes: [
            { upstream: 'cred-slow', model: 'gpt-4o-mini', priority: 0 },
            { upstream: 'cred-b', model: 'gpt-4o-mini', priority: 1 },
          ],
        },
        {
          id: 'total-first',
          type: 'chat',
          strategy: 'ordered',
          routes: [
            { upstream: 'cred-total', model: 'gpt-4o-mini', priority: 0 },
            { upstream: 'cred-b', model: 'gpt-4o-mini', priority: 1 },
          ],
        },
        { id: 'single', type: 'chat', routes: [{ upstream: 'cred-a', model: 'gpt-4o-mini' }] },
        { id: 'capped', type: 'chat', routes: [{ upstream: 'cred-c', model: 'gpt-4o-mini' }] },
      ],
      request_log: { flush_interval_ms: 20 },
    },
    { logLines },
  );
  adminToken = (await running.gateway.tokens.create({ team: 'ops', scopes: ['admin'] })).secret;
});

afterAll(async () => {
  await running.close();
  await Promise.all(Object.values(upstreams).map((upstream) => upstream.close()));
});

beforeEach(() => {
  resetCredentials(running.gateway);
  for (const upstream of Object.values(upstreams)) upstream.requests.length = 0;
});

async function admin(path: string, method = 'GET', token = adminToken): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${running.gateway.url}/admin/v1${path}`, { method, headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function credential(id: string): Promise<Record<string, unknown>> {
  const { body } = await admin('/credentials');
  return (body['data'] as Array<Record<string, unknown>>).find((entry) => entry['id'] === id) as Record<string, unknown>;
}

function ask(model: string, content: string, headers: Record<string, string> = {}) {
  return running.client.chat.completions.create({ model, messages: [{ role: 'user', content }] }, { headers }).withResponse();
}

describe('failover', () => {
  it('429 with Retry-After 2 on A: served by B, A cools 2 s (visible in the admin API and the log) and serves again after', async () => {
    upstreams.a.failNext({ status: 429, headers: { 'retry-after': '2' } });
    const before = Date.now();
    const { data, response } = await ask('ordered-chat', 'failover example');
    expect(data.choices[0]?.message.content).toBeTruthy();
    expect(upstreams.b.requests).toHaveLength(1);
    const row = await running.logRow(response.headers.get('x-request-id'));
    expect(row).toMatchObject({ status: 200, upstream: 'cred-b', sessionSource: 'inferred', affinity: 'new' });
    expect(row.attempts?.map(({ credential: id, outcome, status }) => ({ id, outcome, status }))).toEqual([
      { id: 'cred-a', outcome: 'upstream_rate_limited', status: 429 },
      { id: 'cred-b', outcome: 'ok', status: 200 },
    ]);
    const cooling = await credential('cred-a');
    expect(cooling).toMatchObject({ provider: 'openai', state: 'cooling', reason: 'rate limited (the upstream said until when)', in_flight: 0 });
    const until = Date.parse(cooling['until'] as string);
    expect(until - before).toBeGreaterThanOrEqual(2_000);
    expect(until - Date.now()).toBeLessThanOrEqual(2_000);
    expect(logLines).toContainEqual(
      expect.objectContaining({ msg: 'credential state changed', credential: 'cred-a', from: 'healthy', to: 'cooling', level: 40 }),
    );

    // While A cools, a model served by A alone answers for it, with the time left.
    const refused = await ask('single', 'anyone there?').catch((caught: unknown) => caught);
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    expect((refused as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('upstream_rate_limited');
    expect(Number((refused as InstanceType<typeof OpenAI.RateLimitError>).headers?.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(upstreams.a.requests).toHaveLength(1);

    await new Promise((resolve) => setTimeout(resolve, Math.max(0, until - Date.now())));
    const { response: after } = await ask('single', 'back again');
    expect((await running.logRow(after.headers.get('x-request-id'))).upstream).toBe('cred-a');
    expect(await credential('cred-a')).toMatchObject({ state: 'healthy', until: null });
  });

  it('a timeout before the first byte fails over', async () => {
    const { response } = await ask('slow-first', 'are you slow?');
    const row = await running.logRow(response.headers.get('x-request-id'));
    expect(row.attempts?.map(({ credential: id, outcome }) => [id, outcome])).toEqual([
      ['cred-slow', 'upstream_timeout'],
      ['cred-b', 'ok'],
    ]);
    // One caller's timeout may be its request's doing (a long generation): it does not cool the
    // credential by itself (docs/routing.md); timeouts in a row from several teams do. Operators
    // still see what failed.
    expect(await credential('cred-slow')).toMatchObject({ state: 'healthy', last_error: expect.stringContaining('timeout') });
  });

  it('total_ms ends a call that takes too long as a whole, and it fails over', async () => {
    const { response } = await ask('total-first', 'take your time');
    const row = await running.logRow(response.headers.get('x-request-id'));
    expect(row.attempts?.map(({ credential: id, outcome }) => [id, outcome])).toEqual([
      ['cred-total', 'upstream_timeout'],
      ['cred-b', 'ok'],
    ]);
    expect(logLines).toContainEqual(
      expect.objectContaining({ msg: 'upstream attempt failed', credential: 'cred-total', cause: expect.stringContaining('total_ms (250 ms)') }),
    );
  });

  it("a credential's 401 marks it failed until an operator resets it; the request succeeds on B", async () => {
    upstreams.a.failNext({ status: 401, body: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } } });
    const { response } = await ask('ordered-chat', 'key check');
    expect((await running.logRow(response.headers.get('x-request-id'))).upstream).toBe('cred-b');
    expect(await credential('cred-a')).toMatchObject({ state: 'failed', until: null, reason: 'the upstream refused the credential (401)' });
    const reset = await admin('/credentials/cred-a/reset', 'POST');
    expect(reset).toMatchObject({ status: 200, body: { id: 'cred-a', state: 'healthy' } });
    expect(String(reset.body['last_error'])).toContain('auth 401');
  });
});

describe('session affinity through the SDK', () => {
  it('keeps a session on its credential, moves it once when that fails, and never back', async () => {
    const session = { 'X-Session-Id': 'conversation-move' };
    const first = await ask('ordered-chat', 'turn 1', session);
    expect(first.response.headers.get('x-session-id')).toBe('conversation-move');
    expect(first.response.headers.get('x-session-source')).toBe('header');
    expect(first.response.headers.get('x-session-affinity')).toBe('new');
    expect((await ask('ordered-chat', 'turn 2', session)).response.headers.get('x-session-affinity')).toBe('kept');

    upstreams.a.failNext({ status: 500 });
    const moved = await ask('ordered-chat', 'turn 3', session);
    expect(moved.response.headers.get('x-session-affinity')).toBe('moved');
    const row = await running.logRow(moved.response.headers.get('x-request-id'));
    expect(row).toMatchObject({ sessionId: 'conversation-move', sessionSource: 'header', affinity: 'moved', upstream: 'cred-b' });
    expect(row.attempts?.map(({ credential: id, outcome, status }) => [id, outcome, status])).toEqual([
      ['cred-a', 'upstream_error', 500],
      ['cred-b', 'ok', 200],
    ]);

    // A recovers; the session stays where it moved.
    await admin('/credentials/cred-a/reset', 'POST');
    for (let turn = 4; turn < 8; turn++) {
      const { response } = await ask('ordered-chat', `turn ${turn}`, session);
      expect(response.headers.get('x-session-affinity')).toBe('kept');
      expect((await running.logRow(response.headers.get('x-request-id'))).upstream).toBe('cred-b');
    }
    // A session that never met the failure starts on A, the first by priority.
    expect((await running.logRow((await ask('ordered-chat', 'hello', { 'X-Session-Id': 'other' })).response.headers.get('x-request-id'))).upstream).toBe(
      'cred-a',
    );
  });

  it('refuses a metadata.session_id that is not a string with 422', async () => {
    const refused = await running.client.chat.completions
      .create({ model: 'ordered-chat', messages: [{ role: 'user', content: 'Hi' }], metadata: { session_id: 42 } as unknown as Record<string, string> })
      .catch((caught: unknown) => caught);
    expect(refused).toBeInstanceOf(OpenAI.UnprocessableEntityError);
  });
});

describe('a client that leaves', () => {
  it('aborts its upstream call at once; the row says 499 client_closed_request with the usage generated so far', async () => {
    upstreams.c.options = { chunkDelayMs: 150 };
    try {
      const controller = new AbortController();
      const response = await fetch(`${running.gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${running.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'capped', messages: [{ role: 'user', content: 'Tell me a long story' }], stream: true }),
        signal: controller.signal,
      });
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      let received = '';
      while (!/"content":"[^"]+"/.test(received)) received += new TextDecoder().decode((await reader.read()).value);
      expect((await credential('cred-c'))['in_flight']).toBe(1);
      controller.abort();
      const row = await running.logRow(response.headers.get('x-request-id'));
      expect(row).toMatchObject({ status: 499, errorCode: 'client_closed_request', upstream: 'cred-c', usageSource: 'estimated' });
      expect(row.completionTokens).toBeGreaterThan(0);
      // Its slot on the capped credential (max_in_flight 1) is free for the next request.
      expect((await credential('cred-c'))['in_flight']).toBe(0);
      const { response: next } = await ask('capped', 'my turn');
      expect(next.status).toBe(200);
    } finally {
      upstreams.c.options = {};
    }
  });
});

describe('the admin credentials API', () => {
  it('lists every credential with its state, and needs the admin scope', async () => {
    const { status, body } = await admin('/credentials');
    expect(status).toBe(200);
    expect((body['data'] as Array<Record<string, unknown>>).map((entry) => entry['id'])).toEqual(['cred-a', 'cred-b', 'cred-c', 'cred-slow', 'cred-total']);
    expect((body['data'] as Array<Record<string, unknown>>)[0]).toEqual({
      id: 'cred-a',
      provider: 'openai',
      state: 'healthy',
      until: null,
      reason: null,
      since: expect.anything(),
      cooldowns_in_a_row: 0,
      in_flight: 0,
      last_error: expect.anything(),
      recent: { window_seconds: 600, attempts: expect.any(Number), failures: expect.any(Number), mean_ms: expect.any(Number) },
      origin: 'config',
      account: null,
    });
    // The tests above failed cred-a (429, 401, 500) between its successes.
    const { recent } = (body['data'] as Array<{ recent: { attempts: number; failures: number } }>)[0] as { recent: { attempts: number; failures: number } };
    expect(recent.failures).toBeGreaterThanOrEqual(3);
    expect(recent.attempts).toBeGreaterThan(recent.failures);
    const refused = await admin('/credentials', 'GET', running.token);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: { code: 'insufficient_scope' } });
    expect(await admin('/credentials/nope/disable', 'POST')).toMatchObject({ status: 404, body: { error: { code: 'credential_not_found' } } });
  });

  it('disables a credential (the pool routes around it) and enables it again', async () => {
    expect(await admin('/credentials/cred-a/disable', 'POST')).toMatchObject({ status: 200, body: { state: 'disabled', reason: 'disabled by an operator' } });
    const { response } = await ask('ordered-chat', 'while disabled', { 'X-Session-Id': 'disabled-check' });
    expect((await running.logRow(response.headers.get('x-request-id'))).upstream).toBe('cred-b');
    const refused = await ask('single', 'only A').catch((caught: unknown) => caught);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expect((refused as InstanceType<typeof OpenAI.APIError>).code).toBe('no_upstream_available');
    // A reset does not undo an operator's disable; enable does.
    expect((await admin('/credentials/cred-a/reset', 'POST')).body['state']).toBe('disabled');
    expect((await admin('/credentials/cred-a/enable', 'POST')).body['state']).toBe('healthy');
    expect(upstreams.a.requests).toHaveLength(0);
  });
});
