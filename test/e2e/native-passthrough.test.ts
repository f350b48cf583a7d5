import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync, zstdCompressSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeChatGpt, type FakeChatGpt } from '../fake-upstreams/chatgpt-upstream.js';
import { resetCredentials } from '../support/reset-credentials.js';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';

/**
 * `POST /v1/native/responses` over a pool of two ChatGPT accounts (the fake backend): the body
 * and the stream pass unchanged, only the headers of the allow-list cross, tokens are refreshed
 * exactly once and written back, and usage limits move a session to the other account.
 */
let backend: FakeChatGpt;
let running: TestGateway;
let nativeToken: string;
let adminToken: string;
let authDirectory: string;
const logLines: Array<Record<string, unknown>> = [];

const MODEL = 'gpt-5.1-codex';

function codexBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    model: MODEL,
    stream: true,
    store: false,
    input: [
      { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'You are Codex.' }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Say hello.' }] },
    ],
    tools: [],
    tool_choice: 'auto',
    parallel_tool_calls: false,
    reasoning: { effort: 'medium', summary: 'auto' },
    include: ['reasoning.encrypted_content'],
    prompt_cache_key: 'session-default',
    ...overrides,
  };
}

interface NativeAnswer {
  status: number;
  headers: Headers;
  bytes: Buffer;
  text: string;
}

async function post(body: Buffer | string, headers: Record<string, string> = {}, token = nativeToken): Promise<NativeAnswer> {
  const response = await fetch(`${running.gateway.url}/v1/native/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body,
  });
  const bytes = Buffer.from(await response.arrayBuffer());
  return { status: response.status, headers: response.headers, bytes, text: bytes.toString('utf8') };
}

function send(overrides: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<NativeAnswer> {
  return post(JSON.stringify(codexBody(overrides)), headers);
}

async function credential(id: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${running.gateway.url}/admin/v1/credentials/${id}`, { headers: { authorization: `Bearer ${adminToken}` } });
  return (await response.json()) as Record<string, unknown>;
}

/** The request log row of the request whose response carried `requestId`, once it is written. */
async function logRowOf(requestId: string | null): Promise<Awaited<ReturnType<TestGateway['gateway']['stores']['requestLogs']['query']>>[number]> {
  for (let tries = 0; tries < 100; tries++) {
    const [row] = await running.gateway.stores.requestLogs.query({ requestId: requestId ?? '', limit: 1 });
    if (row !== undefined) return row;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`the request log row of ${requestId} did not arrive`);
}

beforeAll(async () => {
  backend = await startFakeChatGpt();
  backend.addAccount({ accountId: 'acct-a', planType: 'plus' });
  backend.addAccount({ accountId: 'acct-b', planType: 'pro' });
  authDirectory = mkdtempSync(join(tmpdir(), 'switchyard-codex-auth-'));
  for (const account of ['a', 'b']) writeFileSync(join(authDirectory, `${account}.json`), backend.authJson(`acct-${account}`), { mode: 0o600 });
  running = await startTestGateway(
    {
      upstreams: [
        { id: 'chatgpt-a', provider: 'codex', base_url: backend.baseUrl, token_url: backend.tokenUrl, auth_file: join(authDirectory, 'a.json') },
        { id: 'chatgpt-b', provider: 'codex', base_url: backend.baseUrl, token_url: backend.tokenUrl, auth_file: join(authDirectory, 'b.json') },
        // Never reached: its model is refused before routing.
        { id: 'openai-key', provider: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key: 'sk-test' },
      ],
      models: [
        {
          id: MODEL,
          type: 'chat',
          strategy: 'ordered',
          routes: [
            { upstream: 'chatgpt-a', model: MODEL, priority: 0 },
            { upstream: 'chatgpt-b', model: MODEL, priority: 1 },
          ],
        },
        { id: 'gpt-4o-mini', type: 'chat', routes: [{ upstream: 'openai-key', model: 'gpt-4o-mini' }] },
      ],
      request_log: { flush_interval_ms: 20 },
    },
    { logLines },
  );
  nativeToken = (await running.gateway.tokens.create({ team: 'codex-users', scopes: ['native'] })).secret;
  adminToken = (await running.gateway.tokens.create({ team: 'ops', scopes: ['admin'] })).secret;
});

afterAll(async () => {
  await running?.close();
  await backend?.close();
});

beforeEach(() => {
  resetCredentials(running.gateway);
  backend.requests.length = 0;
  backend.sentBodies.length = 0;
  backend.usageLimit('acct-a', null);
  backend.usageLimit('acct-b', null);
});

describe('validation', () => {
  it('refuses what it cannot route, in the documented statuses', async () => {
    const cases: Array<[Buffer | string, number, string, string | null]> = [
      [JSON.stringify(codexBody({ model: 'no-such-model' })), 404, 'model_not_found', 'model'],
      [JSON.stringify(codexBody({ model: 'gpt-4o-mini' })), 400, 'model_not_native', 'model'],
      [JSON.stringify(codexBody({ input: 'hello' })), 422, 'validation_error', 'input'],
      [JSON.stringify(codexBody({ stream: false })), 422, 'validation_error', 'stream'],
      [JSON.stringify({ model: MODEL, input: [] }), 422, 'validation_error', 'stream'],
      ['{"model": ', 400, 'invalid_json', null],
    ];
    for (const [body, status, code, param] of cases) {
      const answer = await post(body);
      expect(answer.status, String(body)).toBe(status);
      const error = (JSON.parse(answer.text) as { error: { code: string; param: string | null } }).error;
      expect(error.code).toBe(code);
      expect(error.param).toBe(param);
    }
    expect(backend.requests).toHaveLength(0);
  });

  it('needs the native scope', async () => {
    const chatOnly = (await running.gateway.tokens.create({ team: 'codex-users', scopes: ['chat'] })).secret;
    expect((await post(JSON.stringify(codexBody()), {}, chatOnly)).status).toBe(403);
    expect((await post(JSON.stringify(codexBody()), {}, 'svc_wrong')).status).toBe(401);
  });
});

describe('bytes through', () => {
  it('passes a zstd body and the stream unchanged, with the allowed headers only', async () => {
    const body = zstdCompressSync(Buffer.from(JSON.stringify(codexBody({ prompt_cache_key: 'session-zstd' }))));
    const answer = await post(body, {
      'content-encoding': 'zstd',
      'session-id': 'session-zstd',
      'thread-id': 'session-zstd',
      'x-client-request-id': 'session-zstd',
      'x-codex-window-id': 'session-zstd:0',
      'x-codex-turn-state': 'turn-state-from-the-client',
      'x-codex-turn-metadata': '{"turn_id":"t1"}',
      'x-codex-beta-features': 'feature-a',
      originator: 'codex_exec',
      'user-agent': 'codex_exec/0.169.0 (test)',
      version: '0.169.0',
      'openai-beta': 'responses=experimental',
      cookie: 'session=secret-cookie',
      'x-forwarded-for': '10.0.0.1',
      forwarded: 'for=10.0.0.1',
    });
    expect(answer.status).toBe(200);
    const [received] = backend.requests;
    expect(received).toBeDefined();
    expect(received?.rawBody.equals(body)).toBe(true);
    expect(received?.headers['content-encoding']).toBe('zstd');
    expect(received?.headers['authorization']).toBe(`Bearer ${backend.currentTokens('acct-a').accessToken}`);
    expect(received?.headers['chatgpt-account-id']).toBe('acct-a');
    for (const name of [
      'session-id',
      'thread-id',
      'x-client-request-id',
      'x-codex-window-id',
      'x-codex-turn-state',
      'x-codex-turn-metadata',
      'x-codex-beta-features',
      'originator',
      'user-agent',
      'version',
      'openai-beta',
    ]) {
      expect(received?.headers[name], name).toBeDefined();
    }
    expect(received?.headers['x-codex-turn-state']).toBe('turn-state-from-the-client');
    for (const name of ['cookie', 'x-forwarded-for', 'forwarded']) expect(received?.headers[name], name).toBeUndefined();
    expect(JSON.stringify(received?.headers)).not.toContain(nativeToken);

    expect(answer.bytes.equals(backend.sentBodies[0] as Buffer)).toBe(true);
    expect(answer.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(answer.headers.get('x-codex-turn-state')).toBeTruthy();
    expect(answer.headers.get('x-codex-primary-used-percent')).not.toBeNull();
    expect(answer.headers.get('x-session-id')).toBe('session-zstd');
    expect(answer.headers.get('x-session-source')).toBe('native');
    expect(answer.text).toContain('event: response.completed');
  });

  it('accepts gzip too, and logs the usage the stream reported', async () => {
    const body = gzipSync(Buffer.from(JSON.stringify(codexBody({ prompt_cache_key: 'session-gzip' }))));
    const answer = await post(body, { 'content-encoding': 'gzip' });
    expect(answer.status).toBe(200);
    expect(backend.requests[0]?.rawBody.equals(body)).toBe(true);
    const completed = answer.text.split('\n\n').find((event) => event.includes('response.completed')) ?? '';
    const usage = (JSON.parse(completed.slice(completed.indexOf('data: ') + 6)) as { response: { usage: Record<string, number | Record<string, number>> } })
      .response.usage;
    const row = await logRowOf(answer.headers.get('x-request-id'));
    expect(row).toMatchObject({
      endpoint: 'native.responses',
      model: MODEL,
      upstream: 'chatgpt-a',
      sessionSource: 'native',
      promptTokens: usage['input_tokens'],
      completionTokens: usage['output_tokens'],
      cachedTokens: (usage['input_tokens_details'] as Record<string, number>)['cached_tokens'],
      reasoningTokens: (usage['output_tokens_details'] as Record<string, number>)['reasoning_tokens'],
      usageSource: 'upstream',
    });
  });

  it('passes an upstream cut on as a cut', async () => {
    backend.reply = () => ({ kind: 'cut', afterEvents: 3 });
    try {
      await expect(send({ prompt_cache_key: 'session-cut' })).rejects.toThrow();
    } finally {
      backend.reply = () => ({ kind: 'text', text: 'Hello from the fake ChatGPT backend.' });
    }
  });
});

describe('tokens', () => {
  it('refreshes an expired access token exactly once for 50 concurrent requests, and writes it back at 0600', async () => {
    backend.issueExpiredTokens('acct-a');
    writeFileSync(join(authDirectory, 'a.json'), backend.authJson('acct-a'));
    // The gateway read the file at start; a 401 from the backend makes it renew.
    backend.expireAccessToken('acct-a');
    const before = backend.refreshCount('acct-a');
    const answers = await Promise.all(Array.from({ length: 50 }, (_, index) => send({ prompt_cache_key: `session-refresh-${index}` })));
    expect(answers.map((answer) => answer.status)).toEqual(Array.from({ length: 50 }, () => 200));
    expect(backend.refreshCount('acct-a') - before).toBe(1);
    const written = JSON.parse(readFileSync(join(authDirectory, 'a.json'), 'utf8')) as { tokens: { access_token: string; refresh_token: string } };
    expect(written.tokens.access_token).toBe(backend.currentTokens('acct-a').accessToken);
    expect(written.tokens.refresh_token).toBe(backend.currentTokens('acct-a').refreshToken);
    expect(statSync(join(authDirectory, 'a.json')).mode & 0o777).toBe(0o600);
    expect(new Set(backend.requests.map((request) => request.accountId))).toEqual(new Set(['acct-a']));
  });

  it('marks an account whose refresh token was spent elsewhere failed, and fails the request over', async () => {
    // Someone else refreshed acct-a with the token the gateway holds: it is spent.
    const spent = backend.currentTokens('acct-a').refreshToken;
    await fetch(backend.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_id: 'app_EMoamEEZ73f0CkXaXp7hrann', grant_type: 'refresh_token', refresh_token: spent }),
    });
    backend.expireAccessToken('acct-a');
    const answer = await send({ prompt_cache_key: 'session-spent' });
    expect(answer.status).toBe(200);
    expect(backend.requests.at(-1)?.accountId).toBe('acct-b');
    expect(backend.tokenRequests.at(-1)?.outcome).toBe('reused');
    const view = await credential('chatgpt-a');
    expect(view['state']).toBe('failed');
    expect(String(view['last_error'])).toContain('refresh_token_reused');
    // Logged in again (a new auth file) and reset by an operator, it serves again: the refused
    // token sends it back to its file, whose new refresh token works.
    backend.issueExpiredTokens('acct-a');
    writeFileSync(join(authDirectory, 'a.json'), backend.authJson('acct-a'));
    const reset = await fetch(`${running.gateway.url}/admin/v1/credentials/chatgpt-a/reset`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}` },
    });
    expect(reset.status).toBe(200);
    expect((await send({ prompt_cache_key: 'session-relogin' })).status).toBe(200);
    expect(backend.requests.at(-1)?.accountId).toBe('acct-a');
  });
});

describe('usage limits', () => {
  it('moves a session to the other account, keeps the quota state, and answers in Codex shape when both are limited', async () => {
    const session = { 'session-id': 'session-limits' };
    const first = await send({ prompt_cache_key: 'session-limits' }, session);
    expect(first.status).toBe(200);
    expect(backend.requests.at(-1)?.accountId).toBe('acct-a');

    const resetA = Math.floor(Date.now() / 1000) + 3_600;
    backend.usageLimit('acct-a', resetA);
    const moved = await send({ prompt_cache_key: 'session-limits' }, session);
    expect(moved.status).toBe(200);
    expect(backend.requests.at(-1)?.accountId).toBe('acct-b');
    expect(moved.headers.get('x-session-affinity')).toBe('moved');
    const viewA = await credential('chatgpt-a');
    expect(viewA['state']).toBe('cooling');
    expect(Date.parse(String(viewA['until'])) / 1000).toBeCloseTo(resetA, -1);
    expect((viewA['account'] as { quota: Record<string, string> }).quota).toHaveProperty('x-codex-primary-used-percent');

    // Stays on B while A is out, without asking A again.
    const requestsBefore = backend.requests.length;
    expect((await send({ prompt_cache_key: 'session-limits' }, session)).status).toBe(200);
    expect(backend.requests.slice(requestsBefore).map((request) => request.accountId)).toEqual(['acct-b']);

    const resetB = resetA + 600;
    backend.usageLimit('acct-b', resetB);
    const limited = await send({ prompt_cache_key: 'session-limits' }, session);
    expect(limited.status).toBe(429);
    const error = (JSON.parse(limited.text) as { error: Record<string, unknown> }).error;
    expect(error).toMatchObject({ type: 'usage_limit_reached', code: 'upstream_quota_exhausted' });
    expect(Number(error['resets_at'])).toBeCloseTo(resetA, -1);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(3_500);
  });
});

describe('chat completions over the same accounts', () => {
  it('serves the SDK plain and streamed, converted to and from the Responses API', async () => {
    backend.reply = () => ({ kind: 'text', text: 'Converted for chat.' });
    try {
      const completion = await running.client.chat.completions.create({
        model: MODEL,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hi' },
        ],
      });
      expect(completion.choices[0]?.message.content).toBe('Converted for chat.');
      expect(completion.usage?.prompt_tokens).toBeGreaterThan(0);
      const sent = backend.requests.at(-1)?.body as { stream: boolean; store: boolean; input: Array<{ role?: string }> };
      expect(sent).toMatchObject({ stream: true, store: false });
      expect(sent.input.map((item) => item.role)).toEqual(['developer', 'user']);

      const stream = await running.client.chat.completions.create({
        model: MODEL,
        messages: [{ role: 'user', content: 'Hi again' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = '';
      let usage: unknown = null;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        if (chunk.usage) usage = chunk.usage;
      }
      expect(text).toBe('Converted for chat.');
      expect(usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number) });
    } finally {
      backend.reply = () => ({ kind: 'text', text: 'Hello from the fake ChatGPT backend.' });
    }
  });

  it('serves a tool call', async () => {
    backend.reply = () => ({ kind: 'function_call', name: 'get_weather', arguments: '{"city":"Paris"}' });
    try {
      const completion = await running.client.chat.completions.create({
        model: MODEL,
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
      });
      expect(completion.choices[0]?.finish_reason).toBe('tool_calls');
      expect(completion.choices[0]?.message.tool_calls?.[0]).toMatchObject({
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
      });
    } finally {
      backend.reply = () => ({ kind: 'text', text: 'Hello from the fake ChatGPT backend.' });
    }
  });
});
