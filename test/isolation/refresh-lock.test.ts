import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startFakeChatGpt, type FakeChatGpt } from '../fake-upstreams/chatgpt-upstream.js';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';
import { FaultyProxy } from '../support/faulty-proxy.js';
import { PrivateRedis, redisServerBinary } from './support/private-redis.js';

const MODEL = 'gpt-5.1-codex';
const ACCOUNT = 'acct-slow-refresh';
const UPSTREAM = 'chatgpt-slow-refresh';

/**
 * A refresh token may be spent once. Two gateway processes over one Redis and one account whose
 * token endpoint answers slower than the refresh lock's lease: the holder renews the lock while
 * its call runs, so the other replica waits, then finds the new tokens in the store and never
 * spends the old refresh token a second time.
 */
describe.skipIf(redisServerBinary === undefined)('the refresh lock against a slow token endpoint', () => {
  let redis: PrivateRedis;
  let proxy: FaultyProxy;
  let backend: FakeChatGpt;
  let replicas: TestGateway[] = [];

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    proxy = await FaultyProxy.start(redis.port);
  });

  afterEach(async () => {
    await Promise.all(replicas.map((replica) => replica.close()));
    replicas = [];
    await backend?.close();
    proxy.restore();
  });

  afterAll(async () => {
    await proxy?.close();
    await redis?.close();
  });

  async function start(count: number, stateUrl: string): Promise<void> {
    backend = await startFakeChatGpt();
    backend.addAccount({ accountId: ACCOUNT, planType: 'pro' });
    backend.issueExpiredTokens(ACCOUNT);
    const authFile = join(mkdtempSync(join(tmpdir(), 'switchyard-refresh-lock-')), 'auth.json');
    writeFileSync(authFile, backend.authJson(ACCOUNT), { mode: 0o600 });
    const document = {
      // The lease shortened from its default so that a 3 s token call outlives it.
      state: { url: stateUrl, key_prefix: `refresh-lock-${Date.now()}:`, lock_lease_ms: 1_000 },
      upstreams: [{ id: UPSTREAM, provider: 'codex', base_url: backend.baseUrl, token_url: backend.tokenUrl, auth_file: authFile }],
      models: [{ id: MODEL, type: 'chat', routes: [{ upstream: UPSTREAM, model: MODEL }] }],
    };
    for (let index = 0; index < count; index++) replicas.push(await startTestGateway(document));
  }

  async function send(replica: TestGateway): Promise<number> {
    const { secret } = await replica.gateway.tokens.create({ team: 'codex', scopes: ['native'] });
    const response = await fetch(`${replica.gateway.url}/v1/native/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: MODEL,
        stream: true,
        store: false,
        input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hello' }] }],
      }),
    });
    await response.arrayBuffer();
    return response.status;
  }

  it('refreshes once when the token endpoint answers after the lease, and the account stays healthy on both replicas', async () => {
    await start(2, redis.url);
    const [first, second] = replicas as [TestGateway, TestGateway];
    backend.tokenDelayMs = 3_000;
    const firstStatus = send(first);
    // The second replica's request arrives while the first one's refresh is at the token endpoint.
    await vi.waitFor(() => expect(backend.tokenRequests).not.toHaveLength(0), { timeout: 10_000, interval: 10 });
    const secondStatus = send(second);
    expect(await Promise.all([firstStatus, secondStatus])).toEqual([200, 200]);
    expect(backend.tokenRequests.map((request) => request.outcome)).toEqual(['rotated']);
    for (const replica of replicas) {
      const view = replica.gateway.credentials.get(UPSTREAM);
      expect({ state: view.state, lastError: view.last_error }).toEqual({ state: 'healthy', lastError: null });
    }
  }, 30_000);

  it('says the refresh lock could not be taken, not what Redis said, when the state is down', async () => {
    await start(1, proxy.proxied(redis.url));
    const [replica] = replicas as [TestGateway];
    proxy.cut();
    expect(await send(replica)).not.toBe(200);
    const lastError = replica.gateway.credentials.get(UPSTREAM).last_error;
    expect(lastError).toContain('could not take the refresh lock: shared state unavailable');
    expect(lastError).not.toMatch(/stream|offline|connection|ECONN/i);
    expect(backend.tokenRequests).toEqual([]);
  }, 30_000);
});
