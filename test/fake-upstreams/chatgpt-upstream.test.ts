import { afterEach, describe, expect, it } from 'vitest';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { readFile } from 'node:fs/promises';
import { gzipSync, zstdCompressSync } from 'node:zlib';
import {
  CODEX_CLIENT_ID,
  DEFAULT_REPLY_TEXT,
  decodeJwtPayload,
  makeJwt,
  parseSseText,
  startFakeChatGpt,
  type FakeChatGpt,
  type FakeChatGptOptions,
  type IssuedTokens,
} from './chatgpt-upstream.js';

// ---------------------------------------------------------------------------
// A small HTTP client that keeps every `data` chunk as it arrived.

interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  chunks: Buffer[];
  body: Buffer;
  /** false when the body ended before the server finished it. */
  complete: boolean;
}

function send(url: string, init: { method?: string; body?: string | Buffer; headers?: Record<string, string> } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: init.method ?? 'POST', headers: init.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', () => undefined);
      res.on('close', () => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, chunks, body: Buffer.concat(chunks), complete: res.complete });
      });
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

const fixture = (name: string): Promise<Buffer> => readFile(new URL(`../fixtures/chatgpt/${name}`, import.meta.url));

/** A Responses request shaped like the ones Codex CLI sends. */
function codexBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    model: 'gpt-5-codex',
    instructions: 'You are Codex.',
    input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Say hello' }] }],
    tools: [],
    tool_choice: 'auto',
    parallel_tool_calls: false,
    reasoning: { effort: 'medium', summary: 'auto' },
    store: false,
    stream: true,
    include: ['reasoning.encrypted_content'],
    prompt_cache_key: 'conversation-1',
    ...overrides,
  };
}

function postResponses(
  fake: FakeChatGpt,
  tokens: { accessToken: string } | undefined,
  accountId: string | undefined,
  body: string | Buffer = JSON.stringify(codexBody()),
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  return send(`${fake.baseUrl}/responses`, {
    body,
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      ...(tokens === undefined ? {} : { authorization: `Bearer ${tokens.accessToken}` }),
      ...(accountId === undefined ? {} : { 'chatgpt-account-id': accountId }),
      ...headers,
    },
  });
}

function refresh(fake: FakeChatGpt, refreshToken: string): Promise<RawResponse> {
  return send(fake.tokenUrl, {
    body: JSON.stringify({ client_id: CODEX_CLIENT_ID, grant_type: 'refresh_token', refresh_token: refreshToken }),
    headers: { 'content-type': 'application/json' },
  });
}

function json(response: RawResponse): Record<string, unknown> {
  const value: unknown = JSON.parse(response.body.toString('utf8'));
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('not a JSON object');
  return value as Record<string, unknown>;
}

function errorOf(response: RawResponse): Record<string, unknown> {
  return json(response).error as Record<string, unknown>;
}

function events(response: RawResponse): Array<Record<string, unknown>> {
  return parseSseText(response.body.toString('utf8')).map((event) => event.data);
}

let fake: FakeChatGpt | undefined;

async function start(options?: FakeChatGptOptions): Promise<FakeChatGpt> {
  fake = await startFakeChatGpt(options);
  return fake;
}

afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

// ---------------------------------------------------------------------------

describe('fake ChatGPT Codex backend: /responses', () => {
  it('streams the recorded text event sequence, one write per event, with quota and turn-state headers', async () => {
    const fake = await start();
    const tokens = fake.addAccount({ accountId: 'acct-a', planType: 'pro' });
    fake.setQuota('acct-a', { primaryUsedPercent: 42, secondaryUsedPercent: 7 });
    fake.eventDelayMs = 25;

    const response = await postResponses(fake, tokens, 'acct-a');

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('text/event-stream');
    expect(response.headers['x-codex-primary-used-percent']).toBe('42');
    expect(response.headers['x-codex-secondary-used-percent']).toBe('7');
    expect(response.headers['x-codex-primary-window-minutes']).toBe('300');
    expect(response.headers['x-codex-secondary-window-minutes']).toBe('10080');
    expect(response.headers['x-codex-plan-type']).toBe('pro');
    const resetAt = Number(response.headers['x-codex-primary-reset-at']);
    const resetAfter = Number(response.headers['x-codex-primary-reset-after-seconds']);
    expect(resetAt - Math.floor(Date.now() / 1000)).toBeGreaterThan(resetAfter - 5);
    expect(response.headers['x-codex-secondary-reset-at']).toMatch(/^\d+$/);
    expect(response.headers['x-codex-turn-state']).toMatch(/^[\w-]{20,}$/);

    const stream = events(response);
    const types = stream.map((event) => event.type);
    const deltas = stream.filter((event) => event.type === 'response.output_text.delta');
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      ...deltas.map(() => 'response.output_text.delta'),
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((event) => event.delta).join('')).toBe(DEFAULT_REPLY_TEXT);
    expect(stream.map((event) => event.sequence_number)).toEqual(stream.map((_, index) => index));
    // The SSE frame's event name matches the payload type.
    expect(parseSseText(response.body.toString('utf8')).every((event) => event.event === event.data.type)).toBe(true);

    const itemDone = stream.find((event) => event.type === 'response.output_item.done') as { item: { id: string; content: Array<{ text: string }> } };
    expect(itemDone.item.id).toMatch(/^msg_[0-9a-f]+$/);
    expect(itemDone.item.content[0]?.text).toBe(DEFAULT_REPLY_TEXT);

    const completed = stream.at(-1)?.response as Record<string, unknown>;
    expect(completed.id).toMatch(/^resp_[0-9a-f]+$/);
    expect((stream[0]?.response as Record<string, unknown>).id).toBe(completed.id);
    expect(completed.status).toBe('completed');
    expect(completed.model).toBe('gpt-5-codex');
    expect(completed.store).toBe(false);
    expect(completed.prompt_cache_key).toBe('conversation-1');
    expect(completed.output).toEqual([]);
    const usage = completed.usage as Record<string, Record<string, number> | number>;
    expect(usage).toMatchObject({
      input_tokens: expect.any(Number),
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: expect.any(Number),
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: expect.any(Number),
    });
    expect(usage.total_tokens).toBe((usage.input_tokens as number) + (usage.output_tokens as number));

    // Every event left in its own write: with a pause between events, each arrived as its own chunk.
    expect(response.chunks.map((chunk) => chunk.toString('utf8'))).toEqual(
      response.body
        .toString('utf8')
        .split(/(?<=\n\n)/)
        .filter((piece) => piece !== ''),
    );
    expect(fake.sentBodies).toHaveLength(1);
    expect(fake.sentBodies[0]?.equals(response.body)).toBe(true);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]).toMatchObject({ method: 'POST', path: '/backend-api/codex/responses', accountId: 'acct-a' });
    expect(fake.requests[0]?.body).toEqual(codexBody());
  });

  it('echoes a turn state the client sends back', async () => {
    const fake = await start();
    const tokens = fake.addAccount({ accountId: 'acct-a' });
    const response = await postResponses(fake, tokens, 'acct-a', undefined, { 'x-codex-turn-state': 'opaque-state-1' });
    expect(response.headers['x-codex-turn-state']).toBe('opaque-state-1');
  });

  it('streams a function call the way the API does', async () => {
    const fake = await start();
    const tokens = fake.addAccount({ accountId: 'acct-a' });
    fake.reply = () => ({ kind: 'function_call', name: 'shell', arguments: '{"command":["ls","-la"]}' });

    const response = await postResponses(fake, tokens, 'acct-a');
    const stream = events(response);
    const types = stream.map((event) => event.type);
    const deltas = stream.filter((event) => event.type === 'response.function_call_arguments.delta');
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      ...deltas.map(() => 'response.function_call_arguments.delta'),
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(deltas.map((event) => event.delta).join('')).toBe('{"command":["ls","-la"]}');
    const added = stream[2]?.item as Record<string, unknown>;
    const done = stream.at(-2)?.item as Record<string, unknown>;
    expect(added).toMatchObject({ type: 'function_call', status: 'in_progress', arguments: '', name: 'shell' });
    expect(done).toMatchObject({ type: 'function_call', status: 'completed', arguments: '{"command":["ls","-la"]}', name: 'shell' });
    expect(done.id).toMatch(/^fc_[0-9a-f]+$/);
    expect(done.call_id).toMatch(/^call_\w{24}$/);
    expect(added.call_id).toBe(done.call_id);
    expect(deltas.every((event) => event.item_id === done.id)).toBe(true);
    expect((stream.at(-1)?.response as Record<string, unknown>).output).toEqual([]);
  });

  it('cuts the connection after N events', async () => {
    const fake = await start();
    const tokens = fake.addAccount({ accountId: 'acct-a' });
    fake.reply = () => ({ kind: 'cut', afterEvents: 3 });

    const response = await postResponses(fake, tokens, 'acct-a');
    expect(response.status).toBe(200);
    expect(response.complete).toBe(false);
    expect(events(response).map((event) => event.type)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added']);
    expect(fake.sentBodies[0]?.equals(response.body)).toBe(true);
  });

  it('refuses a bad bearer, a missing or unknown account, and another account’s token with 401', async () => {
    const fake = await start();
    const a = fake.addAccount({ accountId: 'acct-a' });
    fake.addAccount({ accountId: 'acct-b' });
    const invalidated = await fixture('errors/401-token-invalidated.json');

    const answers = await Promise.all([
      postResponses(fake, { accessToken: 'not-a-token' }, 'acct-a'),
      postResponses(fake, undefined, 'acct-a'),
      postResponses(fake, a, undefined),
      postResponses(fake, a, 'acct-unknown'),
      postResponses(fake, a, 'acct-b'),
    ]);
    for (const answer of answers) {
      expect(answer.status).toBe(401);
      expect(answer.body.equals(invalidated)).toBe(true);
    }
    // Recorded before they were answered, and nothing was streamed.
    expect(fake.requests).toHaveLength(5);
    expect(fake.sentBodies).toHaveLength(0);
  });

  it('refuses an expired or revoked access token with token_expired, and a superseded one with token_invalidated', async () => {
    const fake = await start();
    const first = fake.addAccount({ accountId: 'acct-a' });
    const expired = await fixture('errors/401-token-expired.json');

    fake.expireAccessToken('acct-a');
    const revoked = await postResponses(fake, first, 'acct-a');
    expect(revoked.status).toBe(401);
    expect(revoked.body.equals(expired)).toBe(true);
    expect(errorOf(revoked).code).toBe('token_expired');
    // expireAccessToken leaves the JWT exp as issued.
    expect(decodeJwtPayload(first.accessToken).exp).toBeGreaterThan(Date.now() / 1000);

    const stale = fake.issueExpiredTokens('acct-a');
    expect(decodeJwtPayload(stale.accessToken).exp).toBeLessThan(Date.now() / 1000);
    const pastExp = await postResponses(fake, stale, 'acct-a');
    expect(pastExp.status).toBe(401);
    expect(errorOf(pastExp).code).toBe('token_expired');

    const rotated = await refresh(fake, stale.refreshToken);
    expect(rotated.status).toBe(200);
    const fresh = { accessToken: String(json(rotated).access_token) };
    expect((await postResponses(fake, fresh, 'acct-a')).status).toBe(200);
    const superseded = await postResponses(fake, stale, 'acct-a');
    expect(superseded.status).toBe(401);
    expect(errorOf(superseded).code).toBe('token_invalidated');
  });

  it('answers 400 for stream other than true and store other than false, after the auth check', async () => {
    const fake = await start();
    const tokens = fake.addAccount({ accountId: 'acct-a' });
    const streamBody = await fixture('errors/400-stream-must-be-true.json');
    const storeBody = await fixture('errors/400-store-must-be-false.json');

    const streamFalse = await postResponses(fake, tokens, 'acct-a', JSON.stringify(codexBody({ stream: false })));
    expect(streamFalse.status).toBe(400);
    expect(streamFalse.body.equals(streamBody)).toBe(true);

    const { store: _omitted, ...withoutStore } = codexBody();
    const storeMissing = await postResponses(fake, tokens, 'acct-a', JSON.stringify(withoutStore));
    expect(storeMissing.status).toBe(400);
    expect(json(storeMissing)).toEqual({ detail: 'Store must be set to false' });
    expect(storeMissing.body.equals(storeBody)).toBe(true);

    const storeTrue = await postResponses(fake, tokens, 'acct-a', JSON.stringify(codexBody({ store: true })));
    expect(storeTrue.status).toBe(400);

    const unauthenticated = await postResponses(fake, undefined, 'acct-a', JSON.stringify(codexBody({ stream: false })));
    expect(unauthenticated.status).toBe(401);
  });

  it('decodes zstd and gzip bodies while rawBody keeps the compressed bytes', async () => {
    const fake = await start();
    const tokens = fake.addAccount({ accountId: 'acct-a' });
    const plain = Buffer.from(JSON.stringify(codexBody()), 'utf8');

    for (const [encoding, compressed] of [
      ['zstd', zstdCompressSync(plain)],
      ['gzip', gzipSync(plain)],
    ] as const) {
      const response = await postResponses(fake, tokens, 'acct-a', compressed, { 'content-encoding': encoding });
      expect(response.status).toBe(200);
      const recorded = fake.requests.at(-1);
      expect(recorded?.rawBody.equals(compressed)).toBe(true);
      expect(recorded?.rawBody.equals(plain)).toBe(false);
      expect(recorded?.body).toEqual(codexBody());
      expect(recorded?.headers['content-encoding']).toBe(encoding);
      expect(recorded?.rawHeaders).toContain('content-encoding');
    }

    const garbage = await postResponses(fake, tokens, 'acct-a', Buffer.from('not zstd'), { 'content-encoding': 'zstd' });
    expect(garbage.status).toBe(400);
    expect(fake.requests.at(-1)?.body).toBeUndefined();
  });

  it('answers the recorded 429 usage_limit_reached while a usage limit is set', async () => {
    const fake = await start();
    const tokens = fake.addAccount({ accountId: 'acct-a', planType: 'plus' });
    const resetsAt = Math.floor(Date.now() / 1000) + 3600;
    fake.usageLimit('acct-a', resetsAt);

    const limited = await postResponses(fake, tokens, 'acct-a');
    expect(limited.status).toBe(429);
    const error = errorOf(limited);
    expect(error).toMatchObject({
      type: 'usage_limit_reached',
      message: 'The usage limit has been reached',
      plan_type: 'plus',
      resets_at: resetsAt,
    });
    expect(error.resets_in_seconds).toBeGreaterThan(3590);
    expect(error.resets_in_seconds).toBeLessThanOrEqual(3600);
    expect(limited.headers['x-codex-primary-used-percent']).toBe('100');
    expect(limited.headers['x-codex-primary-reset-at']).toBe(String(resetsAt));
    expect(limited.headers['x-codex-active-limit']).toBe('premium');

    // Stream/store are checked before the limit.
    expect((await postResponses(fake, tokens, 'acct-a', JSON.stringify(codexBody({ stream: false })))).status).toBe(400);

    fake.usageLimit('acct-a', null);
    expect((await postResponses(fake, tokens, 'acct-a')).status).toBe(200);

    fake.usageLimit('acct-a', Math.floor(Date.now() / 1000) - 1);
    expect((await postResponses(fake, tokens, 'acct-a')).status).toBe(200);
  });

  it('lifts a usage limit when the clock passes its reset time', async () => {
    let clock = Date.parse('2026-01-01T00:00:00Z');
    const fake = await start({ now: () => clock });
    const tokens = fake.addAccount({ accountId: 'acct-a' });
    fake.usageLimit('acct-a', clock / 1000 + 60);
    expect((await postResponses(fake, tokens, 'acct-a')).status).toBe(429);
    clock += 61_000;
    expect((await postResponses(fake, tokens, 'acct-a')).status).toBe(200);
  });

  it('serves queued failures before anything else, per account when asked', async () => {
    const fake = await start();
    const a = fake.addAccount({ accountId: 'acct-a' });
    const b = fake.addAccount({ accountId: 'acct-b' });
    fake.failNext({ status: 503, body: { error: { message: 'overloaded', code: 'server_is_overloaded' } }, headers: { 'retry-after': '2' } });
    fake.failNext({ status: 500, accountId: 'acct-b' });
    fake.failNext({ status: 401 });

    const first = await postResponses(fake, undefined, 'acct-a');
    expect(first.status).toBe(503);
    expect(first.headers['retry-after']).toBe('2');
    expect(errorOf(first).code).toBe('server_is_overloaded');

    const second = await postResponses(fake, a, 'acct-a');
    expect(second.status).toBe(401);
    expect(errorOf(second).code).toBe('token_expired');

    expect((await postResponses(fake, a, 'acct-a')).status).toBe(200);
    const forB = await postResponses(fake, b, 'acct-b');
    expect(forB.status).toBe(500);
    expect(json(forB)).toEqual({ detail: 'Internal Server Error' });
    expect(fake.requests).toHaveLength(4);
  });
});

describe('fake ChatGPT OAuth token endpoint', () => {
  it('issues JWT access and id tokens with the ChatGPT claims, and a Codex auth.json', async () => {
    const fake = await start();
    const tokens = fake.addAccount({ accountId: 'acct-a', planType: 'team' }, { accessTokenTtlSeconds: 600 });
    const now = Date.now() / 1000;

    for (const token of [tokens.accessToken, tokens.idToken]) {
      const parts = token.split('.');
      expect(parts).toHaveLength(3);
      expect(parts.every((part) => /^[\w-]+$/.test(part))).toBe(true);
      expect(decodeJwtPayload(token)['https://api.openai.com/auth']).toMatchObject({
        chatgpt_account_id: 'acct-a',
        chatgpt_plan_type: 'team',
      });
    }
    const access = decodeJwtPayload(tokens.accessToken);
    expect(access.exp).toBeGreaterThan(now + 590);
    expect(access.exp).toBeLessThanOrEqual(now + 601);
    expect(decodeJwtPayload(tokens.idToken).email).toBe('acct-a@example.com');
    expect(tokens.refreshToken).not.toContain('.');

    const auth = JSON.parse(fake.authJson('acct-a', { lastRefresh: '2026-01-01T00:00:00Z' })) as unknown;
    expect(auth).toEqual({
      auth_mode: 'chatgpt',
      OPENAI_API_KEY: null,
      tokens: { id_token: tokens.idToken, access_token: tokens.accessToken, refresh_token: tokens.refreshToken, account_id: 'acct-a' },
      last_refresh: '2026-01-01T00:00:00Z',
    });
    expect(makeJwt({ a: 1 }).split('.')[2]).toBe(Buffer.from('signature').toString('base64url'));
  });

  it('rotates the refresh token, refuses the old one as refresh_token_reused, and keeps the newest one working', async () => {
    const fake = await start();
    const first = fake.addAccount({ accountId: 'acct-a' });
    const reusedBody = await fixture('oauth/401-refresh-token-reused.json');

    const rotated = await refresh(fake, first.refreshToken);
    expect(rotated.status).toBe(200);
    const second = json(rotated);
    expect(Object.keys(second).sort()).toEqual(['access_token', 'id_token', 'refresh_token']);
    expect(second.refresh_token).not.toBe(first.refreshToken);
    expect(second.access_token).not.toBe(first.accessToken);
    expect(second.id_token).not.toBe(first.idToken);
    expect(fake.refreshCount('acct-a')).toBe(1);
    expect(JSON.parse(fake.authJson('acct-a'))).toMatchObject({ tokens: { refresh_token: second.refresh_token, access_token: second.access_token } });

    const reused = await refresh(fake, first.refreshToken);
    expect(reused.status).toBe(401);
    expect(reused.body.equals(reusedBody)).toBe(true);
    expect(errorOf(reused).code).toBe('refresh_token_reused');

    // Without family revocation the newest tokens still work.
    expect((await postResponses(fake, { accessToken: String(second.access_token) }, 'acct-a')).status).toBe(200);
    const third = await refresh(fake, String(second.refresh_token));
    expect(third.status).toBe(200);
    expect(fake.refreshCount('acct-a')).toBe(2);
    expect(fake.tokenRequests.map((entry) => entry.outcome)).toEqual(['rotated', 'reused', 'rotated']);
    expect(fake.tokenRequests[1]?.refreshToken).toBe(first.refreshToken);
  });

  it('revokes the whole token family on reuse when asked to', async () => {
    const fake = await start({ revokeFamilyOnReuse: true });
    const first = fake.addAccount({ accountId: 'acct-a' });
    const second = json(await refresh(fake, first.refreshToken));
    expect((await refresh(fake, first.refreshToken)).status).toBe(401);

    const newest = await refresh(fake, String(second.refresh_token));
    expect(newest.status).toBe(401);
    expect(errorOf(newest).code).toBe('refresh_token_invalidated');
    const access = await postResponses(fake, { accessToken: String(second.access_token) }, 'acct-a');
    expect(access.status).toBe(401);
    expect(errorOf(access).code).toBe('token_invalidated');
  });

  it('refuses an unknown refresh token as refresh_token_invalidated and a malformed request with 400', async () => {
    const fake = await start();
    fake.addAccount({ accountId: 'acct-a' });
    const invalidatedBody = await fixture('oauth/401-refresh-token-invalidated.json');

    const unknown = await refresh(fake, 'rt_never-issued');
    expect(unknown.status).toBe(401);
    expect(unknown.body.equals(invalidatedBody)).toBe(true);

    const wrongClient = await send(fake.tokenUrl, {
      body: JSON.stringify({ client_id: 'app_other', grant_type: 'refresh_token', refresh_token: 'x' }),
      headers: { 'content-type': 'application/json' },
    });
    expect(wrongClient.status).toBe(400);
    const empty = await refresh(fake, '');
    expect(empty.status).toBe(400);
    expect(fake.tokenRequests.map((entry) => entry.outcome)).toEqual(['invalid', 'invalid', 'invalid']);
  });

  it('accepts the same refresh as form-urlencoded', async () => {
    const fake = await start();
    const tokens: IssuedTokens = fake.addAccount({ accountId: 'acct-a' });
    const response = await send(fake.tokenUrl, {
      body: new URLSearchParams({ client_id: CODEX_CLIENT_ID, grant_type: 'refresh_token', refresh_token: tokens.refreshToken }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(response.status).toBe(200);
    expect(fake.tokenRequests[0]?.body).toEqual({ client_id: CODEX_CLIENT_ID, grant_type: 'refresh_token', refresh_token: tokens.refreshToken });
  });

  it('rotates exactly once when 50 refreshes race with the same token', async () => {
    const fake = await start();
    const tokens = fake.addAccount({ accountId: 'acct-a' });
    fake.tokenDelayMs = 50;

    const answers = await Promise.all(Array.from({ length: 50 }, () => refresh(fake, tokens.refreshToken)));
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
    const refused = answers.filter((answer) => answer.status === 401);
    expect(refused).toHaveLength(49);
    expect(refused.every((answer) => errorOf(answer).code === 'refresh_token_reused')).toBe(true);
    expect(fake.refreshCount('acct-a')).toBe(1);
    expect(fake.tokenRequests.filter((entry) => entry.outcome === 'rotated')).toHaveLength(1);
    expect(fake.tokenRequests.filter((entry) => entry.outcome === 'reused')).toHaveLength(49);
    const winner = json(answers.find((answer) => answer.status === 200) as RawResponse);
    expect(fake.currentTokens('acct-a').refreshToken).toBe(winner.refresh_token);
  });

  it('issues unique tokens', async () => {
    const fake = await start();
    const seen = new Set<string>();
    for (let index = 0; index < 5; index++) {
      const tokens = fake.addAccount({ accountId: `acct-${index}` });
      const rotated = json(await refresh(fake, tokens.refreshToken));
      for (const token of [tokens.idToken, tokens.accessToken, tokens.refreshToken, rotated.id_token, rotated.access_token, rotated.refresh_token]) {
        seen.add(String(token));
      }
    }
    expect(seen.size).toBe(30);
  });
});
