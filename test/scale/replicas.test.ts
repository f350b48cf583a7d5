import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import pg from 'pg';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startFakeChatGpt, type FakeChatGpt } from '../fake-upstreams/chatgpt-upstream.js';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../fake-upstreams/openai-upstream.js';
import { nginxBinary } from '../support/private-nginx.js';
import { isolatedPostgresUrl } from '../support/postgres-url.js';
import { cli } from '../support/run-cli.js';
import { adminCall, teamToken as newTeamToken } from './support/admin-calls.js';
import { startReplicaSet, type ReplicaSet } from './support/replica-set.js';

const DATABASE_URL = process.env['TEST_DATABASE_URL'];
const REDIS_URL = process.env['TEST_REDIS_URL'];
const CODEX_MODEL = 'gpt-5.1-codex';

/** Credentials of the suite: each its own fake upstream, so that what one received is its own. */
const CREDENTIALS = ['plain', 'session-a', 'session-b', 'cool-a', 'cool-b'] as const;
type Credential = (typeof CREDENTIALS)[number];

/**
 * Three `switchyard serve` OS processes over one PostgreSQL and one Redis, behind docs/deploy.md's
 * nginx: what one replica decides (limits, quotas, bindings, cooldowns, revocations, sign-ins, a
 * token refresh), every replica holds to, and the request log has each request once.
 */
describe.skipIf(nginxBinary === undefined || DATABASE_URL === undefined || REDIS_URL === undefined)('three replicas behind nginx', () => {
  const keyPrefix = `switchyard-scale:${randomBytes(6).toString('hex')}:`;
  const upstreams = new Map<Credential, FakeOpenAIUpstream>();
  let chatgpt: FakeChatGpt;
  let database: { url: string; drop(): Promise<void> };
  let directory: string;
  let set: ReplicaSet;
  let adminToken: string;
  /** The `X-Request-Id` of every `/v1` answer the suite got: what the request log must hold, once each. */
  const answered = new Set<string>();

  beforeAll(async () => {
    for (const credential of CREDENTIALS) upstreams.set(credential, await startFakeOpenAIUpstream());
    chatgpt = await startFakeChatGpt();
    chatgpt.addAccount({ accountId: 'acct-shared', planType: 'pro' });
    chatgpt.issueExpiredTokens('acct-shared');
    directory = mkdtempSync(join(tmpdir(), 'switchyard-scale-'));
    const authFile = join(directory, 'auth.json');
    writeFileSync(authFile, chatgpt.authJson('acct-shared'), { mode: 0o600 });
    database = await isolatedPostgresUrl(DATABASE_URL as string);
    const upstream = (credential: Credential) => ({
      id: credential,
      provider: 'openai',
      base_url: (upstreams.get(credential) as FakeOpenAIUpstream).url,
      api_key: `sk-${credential}`,
    });
    const config = {
      server: { host: '127.0.0.1', port: 8080, shutdown_timeout_ms: 5_000, trusted_proxies: ['127.0.0.1'] },
      database: { url: database.url },
      state: { url: REDIS_URL, key_prefix: keyPrefix },
      request_log: { flush_interval_ms: 100 },
      upstreams: [
        ...CREDENTIALS.map(upstream),
        { id: 'chatgpt-shared', provider: 'codex', base_url: chatgpt.baseUrl, token_url: chatgpt.tokenUrl, auth_file: authFile },
      ],
      models: [
        { id: 'plain', type: 'chat', routes: [{ upstream: 'plain', model: 'gpt-4o-mini' }] },
        {
          id: 'sessions',
          type: 'chat',
          routes: [
            { upstream: 'session-a', model: 'gpt-4o-mini' },
            { upstream: 'session-b', model: 'gpt-4o-mini' },
          ],
        },
        {
          id: 'ordered',
          type: 'chat',
          strategy: 'ordered',
          routes: [
            { upstream: 'cool-a', model: 'gpt-4o-mini', priority: 0 },
            { upstream: 'cool-b', model: 'gpt-4o-mini', priority: 1 },
          ],
        },
        { id: CODEX_MODEL, type: 'chat', routes: [{ upstream: 'chatgpt-shared', model: CODEX_MODEL }] },
      ],
    };
    writeFileSync(join(directory, 'switchyard.yaml'), JSON.stringify(config));
    // The operator's token, made before any replica starts (the command migrates the empty schema).
    const created = await cli('tokens', 'create', '--config', join(directory, 'switchyard.yaml'), '--team', 'ops', '--scopes', 'admin');
    expect(created.code).toBe(0);
    adminToken = created.stdout.at(-1) as string;
    set = await startReplicaSet(directory, config);
  }, 60_000);

  afterAll(async () => {
    await set?.close();
    for (const upstream of upstreams.values()) await upstream.close();
    await chatgpt?.close();
    await database?.drop();
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
    const redis = new Redis(REDIS_URL as string);
    const keys = await redis.keys(`${keyPrefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  /** An admin API call through nginx. */
  const admin = (method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown) => adminCall(set.url, adminToken, method, path, body);
  const teamToken = (team: string, limits: Record<string, number> = {}, scopes = ['chat']) => newTeamToken(set.url, adminToken, team, limits, scopes);

  function client(token: string, url = set.url): OpenAI {
    return new OpenAI({ apiKey: token, baseURL: `${url}/v1`, maxRetries: 0 });
  }

  interface Outcome {
    status: number;
    code: string | null;
    headers: Headers;
    totalTokens: number;
  }

  /** One chat completion through the SDK: its status, error code and headers; the answer's id is kept. */
  async function chat(openai: OpenAI, model: string, init: { content?: string; session?: string } = {}): Promise<Outcome> {
    try {
      const { data, response } = await openai.chat.completions
        .create(
          { model, messages: [{ role: 'user', content: init.content ?? `Hi ${randomBytes(4).toString('hex')}` }] },
          init.session === undefined ? {} : { headers: { 'x-session-id': init.session } },
        )
        .withResponse();
      answered.add(response.headers.get('x-request-id') as string);
      return { status: response.status, code: null, headers: response.headers, totalTokens: data.usage?.total_tokens ?? 0 };
    } catch (error) {
      if (!(error instanceof OpenAI.APIError) || error.status === undefined) throw error;
      answered.add(error.headers?.get('x-request-id') as string);
      return { status: error.status, code: typeof error.code === 'string' ? error.code : null, headers: error.headers ?? new Headers(), totalTokens: 0 };
    }
  }

  /** Access lines of each replica whose request id is one of `ids`. */
  function servedBy(ids: ReadonlySet<string>): number[] {
    return set.replicas.map((replica) => replica.accessLines().filter((line) => ids.has(String(line['requestId']))).length);
  }

  it('a team rpm of 30 admits exactly 30 of 90 concurrent requests spread over the three replicas', async () => {
    const openai = client(await teamToken('rpm-team', { rpm: 30 }));
    const outcomes = await Promise.all(Array.from({ length: 90 }, () => chat(openai, 'plain')));
    expect(outcomes.filter((outcome) => outcome.status === 200)).toHaveLength(30);
    expect(outcomes.filter((outcome) => outcome.status === 429 && outcome.code === 'rate_limit_exceeded')).toHaveLength(60);
    const ids = new Set(outcomes.map((outcome) => outcome.headers.get('x-request-id') as string));
    await vi.waitFor(() => expect(servedBy(ids).reduce((sum, count) => sum + count, 0)).toBe(90), { timeout: 5_000, interval: 50 });
    // Round robin: each replica took a third of them.
    for (const count of servedBy(ids)) expect(count).toBeGreaterThanOrEqual(25);
  });

  it('a tokens_per_day quota stops at the same request on every replica', async () => {
    // What one answer of the upstream spends, measured on a team without a quota.
    const spent = (await chat(client(await teamToken('measure-team')), 'plain')).totalTokens;
    expect(spent).toBeGreaterThan(0);
    // Five answers fit; the sixth crosses the quota; the seventh is refused, wherever it lands.
    const openai = client(await teamToken('quota-team', { tokens_per_day: Math.floor(5.5 * spent) }));
    const statuses: number[] = [];
    for (let index = 0; index < 9; index++) {
      const outcome = await chat(openai, 'plain');
      statuses.push(outcome.status);
      if (outcome.status !== 200) expect(outcome.code).toBe('quota_exceeded');
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429, 429, 429]);
    for (const replica of set.replicas) expect((await chat(client(openai.apiKey as string, replica.url), 'plain')).code).toBe('quota_exceeded');
  });

  it('a session bound on one replica stays on its credential on the others', async () => {
    const openai = client(await teamToken('session-team'));
    const turns: Outcome[] = [];
    for (let turn = 0; turn < 6; turn++) turns.push(await chat(openai, 'sessions', { session: 'scale-session-1' }));
    expect(turns.map((turn) => turn.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(turns.map((turn) => turn.headers.get('x-session-affinity'))).toEqual(['new', 'kept', 'kept', 'kept', 'kept', 'kept']);
    const ids = new Set(turns.map((turn) => turn.headers.get('x-request-id') as string));
    await vi.waitFor(() => expect(servedBy(ids)).toEqual([2, 2, 2]), { timeout: 5_000, interval: 50 });
    const received = ['session-a', 'session-b'].map((credential) => (upstreams.get(credential as Credential) as FakeOpenAIUpstream).requests.length);
    expect(received.sort()).toEqual([0, 6]);
  });

  it('a credential put in cooldown by one replica is skipped by all within one second', async () => {
    const openai = client(await teamToken('cooldown-team'));
    const first = upstreams.get('cool-a') as FakeOpenAIUpstream;
    const second = upstreams.get('cool-b') as FakeOpenAIUpstream;
    expect((await chat(openai, 'ordered')).status).toBe(200);
    expect([first.requests.length, second.requests.length]).toEqual([1, 0]);
    first.failNext({
      status: 429,
      headers: { 'retry-after': '60' },
      body: { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } },
    });
    // The replica that meets the 429 fails over to the second credential.
    const failedOver = await chat(openai, 'ordered');
    const cooledAt = performance.now();
    expect(failedOver.status).toBe(200);
    expect([first.requests.length, second.requests.length]).toEqual([2, 1]);
    await sleep(Math.max(0, 1_000 - (performance.now() - cooledAt)));
    // Every replica, asked directly, now skips it.
    for (const replica of set.replicas)
      for (let index = 0; index < 3; index++) expect((await chat(client(openai.apiKey as string, replica.url), 'ordered')).status).toBe(200);
    expect([first.requests.length, second.requests.length]).toEqual([2, 10]);
  });

  it('a token revoked on one replica is refused by all on their next request', async () => {
    const token = await teamToken('revoke-team');
    for (const replica of set.replicas) expect((await chat(client(token, replica.url), 'plain')).status).toBe(200);
    const [listed] = (await admin('GET', '/tokens?team=revoke-team')).data as Array<{ id: string }>;
    // Through nginx: one of the replicas revokes it.
    await admin('POST', `/tokens/${(listed as { id: string }).id}/revoke`);
    for (const replica of set.replicas) {
      const refused = await chat(client(token, replica.url), 'plain');
      expect({ status: refused.status, code: refused.code }).toEqual({ status: 401, code: 'revoked_api_key' });
    }
  });

  it('a console sign-in made on one replica works on the others', async () => {
    const [signingIn, ...others] = set.replicas;
    const opened = await request(`${signingIn?.url}/admin/v1/console/session`, { method: 'POST', headers: { authorization: `Bearer ${adminToken}` } });
    expect(opened.statusCode).toBe(201);
    await opened.body.text();
    const setCookie = opened.headers['set-cookie'];
    const cookie = (Array.isArray(setCookie) ? setCookie[0] : setCookie)?.split(';')[0] as string;
    expect(cookie).toMatch(/^switchyard_console=/);
    for (const replica of others) {
      const session = await request(`${replica.url}/admin/v1/console/session`, { headers: { cookie } });
      expect(await session.body.json()).toMatchObject({ object: 'console_session', signed_in: true });
      const teams = await request(`${replica.url}/admin/v1/teams`, { headers: { cookie } });
      expect(teams.statusCode).toBe(200);
      await teams.body.text();
    }
  });

  it('a burst of 50 requests over the three replicas on an expired ChatGPT account token causes exactly one refresh', async () => {
    const token = await teamToken('codex-team', {}, ['native']);
    // A slow token endpoint: every request arrives while the refresh is under way.
    chatgpt.tokenDelayMs = 100;
    const send = async (index: number): Promise<number> => {
      const answer = await request(`${set.url}/v1/native/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: CODEX_MODEL,
          stream: true,
          store: false,
          input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: `hello ${index}` }] }],
          prompt_cache_key: `scale-${index}`,
        }),
      });
      answered.add(answer.headers['x-request-id'] as string);
      await answer.body.text();
      return answer.statusCode;
    };
    const statuses = await Promise.all(Array.from({ length: 50 }, (_, index) => send(index)));
    expect(statuses).toEqual(Array.from({ length: 50 }, () => 200));
    expect(chatgpt.refreshCount('acct-shared')).toBe(1);
    const current = chatgpt.currentTokens('acct-shared');
    expect(new Set(chatgpt.requests.map((received) => received.headers['authorization']))).toEqual(new Set([`Bearer ${current.accessToken}`]));
    // Every replica served some of them.
    await vi.waitFor(
      () =>
        expect(set.replicas.map((replica) => replica.accessLines().filter((line) => line['path'] === '/v1/native/responses').length).sort()).toEqual([
          16, 17, 17,
        ]),
      { timeout: 5_000, interval: 50 },
    );
  });

  it('the request log holds exactly one row per request sent', async () => {
    expect(answered.size).toBeGreaterThan(150);
    const reader = new pg.Client({ connectionString: database.url });
    await reader.connect();
    try {
      await vi.waitFor(
        async () => {
          const rows = (await reader.query<{ id: string }>('select id from request_logs')).rows;
          expect(rows).toHaveLength(answered.size);
          expect(new Set(rows.map((row) => row.id))).toEqual(answered);
        },
        { timeout: 5_000, interval: 200 },
      );
    } finally {
      await reader.end();
    }
  });
});
