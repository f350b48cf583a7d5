import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../fake-upstreams/openai-upstream.js';
import { FaultyProxy } from '../support/faulty-proxy.js';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';

const REDIS_URL = process.env.TEST_REDIS_URL;

/**
 * Gateway processes sharing one Redis (`state.url`) behave as one: a session bound by one is kept
 * by the other, a cooldown set by one is honoured by the other, each sees the other's requests in
 * flight, and a Redis lost while running costs no request.
 */
describe.skipIf(!REDIS_URL)('gateways sharing one Redis', () => {
  const url = REDIS_URL ?? '';
  /** This run's own keys, so runs sharing the server never meet. */
  const keyPrefix = `switchyard-test:${randomBytes(6).toString('hex')}:`;
  let upstreams: Record<'a' | 'b' | 'c' | 'd', FakeOpenAIUpstream>;
  let first: TestGateway;
  let second: TestGateway;
  let adminToken: string;

  function document(stateUrl: string): { upstreams: unknown[]; models: unknown[] } & Record<string, unknown> {
    return {
      state: { url: stateUrl, key_prefix: keyPrefix },
      request_log: { flush_interval_ms: 20 },
      upstreams: (['a', 'b', 'c', 'd'] as const).map((name) => ({
        id: `cred-${name}`,
        provider: 'openai',
        base_url: upstreams[name].url,
        api_key: `sk-${name}`,
      })),
      models: [
        {
          id: 'pool',
          type: 'chat',
          routes: (['a', 'b', 'c', 'd'] as const).map((name) => ({ upstream: `cred-${name}`, model: 'gpt-4o-mini' })),
        },
        { id: 'only-a', type: 'chat', routes: [{ upstream: 'cred-a', model: 'gpt-4o-mini' }] },
        { id: 'only-d', type: 'chat', routes: [{ upstream: 'cred-d', model: 'gpt-4o-mini' }] },
      ],
    };
  }

  beforeAll(async () => {
    upstreams = {
      a: await startFakeOpenAIUpstream(),
      b: await startFakeOpenAIUpstream(),
      c: await startFakeOpenAIUpstream(),
      d: await startFakeOpenAIUpstream(),
    };
    first = await startTestGateway(document(url));
    // The second process shares the first one's database too, as replicas do: one token works on both.
    second = await startTestGateway({ ...document(url), database: { url: `sqlite:${first.directory}/switchyard.db` } });
    adminToken = (await first.gateway.tokens.create({ team: 'ops', scopes: ['admin'] })).secret;
  });

  afterAll(async () => {
    await second?.close();
    await first?.close();
    await Promise.all(Object.values(upstreams ?? {}).map((upstream) => upstream.close()));
    const admin = new Redis(url);
    const keys = await admin.keys(`${keyPrefix}*`);
    if (keys.length > 0) await admin.del(...keys);
    await admin.quit();
  });

  function client(gateway: TestGateway): OpenAI {
    return new OpenAI({ apiKey: first.token, baseURL: `${gateway.gateway.url}/v1`, maxRetries: 0, timeout: 10_000 });
  }

  async function upstreamOf(gateway: TestGateway, requestId: string | null): Promise<string | null> {
    for (let tries = 0; tries < 100; tries++) {
      const [row] = await gateway.gateway.stores.requestLogs.query({ requestId: requestId as string, limit: 1 });
      if (row !== undefined) return row.upstream;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`no row for ${requestId}`);
  }

  async function credentials(gateway: TestGateway): Promise<Array<Record<string, unknown>>> {
    const response = await fetch(`${gateway.gateway.url}/admin/v1/credentials`, { headers: { authorization: `Bearer ${adminToken}` } });
    return ((await response.json()) as { data: Array<Record<string, unknown>> }).data;
  }

  async function eventually<T>(read: () => Promise<T>, accept: (value: T) => boolean, waitMs = 4_000): Promise<T> {
    const deadline = Date.now() + waitMs;
    let value = await read();
    while (!accept(value) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      value = await read();
    }
    return value;
  }

  it('a session bound by one gateway is kept by the other', async () => {
    for (let index = 0; index < 10; index++) {
      const headers = { 'X-Session-Id': `shared-${index}` };
      const bound = await client(first)
        .chat.completions.create({ model: 'pool', messages: [{ role: 'user', content: 'Hi' }] }, { headers })
        .withResponse();
      expect(bound.response.headers.get('x-session-affinity')).toBe('new');
      const kept = await client(second)
        .chat.completions.create({ model: 'pool', messages: [{ role: 'user', content: 'Again' }] }, { headers })
        .withResponse();
      expect(kept.response.headers.get('x-session-affinity')).toBe('kept');
      expect(await upstreamOf(second, kept.response.headers.get('x-request-id'))).toBe(await upstreamOf(first, bound.response.headers.get('x-request-id')));
    }
  });

  it('a cooldown set by one gateway is honoured by the other', async () => {
    upstreams.a.failNext({ status: 429, headers: { 'retry-after': '30' } });
    const refused = await client(first)
      .chat.completions.create({ model: 'only-a', messages: [{ role: 'user', content: 'Hi' }] })
      .catch((caught: unknown) => caught);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(429);
    const seen = await eventually(
      () => credentials(second),
      (list) => list.find((entry) => entry['id'] === 'cred-a')?.['state'] === 'cooling',
    );
    expect(seen.find((entry) => entry['id'] === 'cred-a')).toMatchObject({ state: 'cooling', reason: 'rate limited (the upstream said until when)' });
    const answered = upstreams.a.requests.length;
    const onSecond = await client(second)
      .chat.completions.create({ model: 'only-a', messages: [{ role: 'user', content: 'Hi' }] })
      .catch((caught: unknown) => caught);
    expect(onSecond).toBeInstanceOf(OpenAI.RateLimitError);
    expect((onSecond as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('upstream_rate_limited');
    expect(Number((onSecond as InstanceType<typeof OpenAI.RateLimitError>).headers?.get('retry-after'))).toBeGreaterThan(20);
    expect(upstreams.a.requests.length).toBe(answered);
    // An operator's reset on the second is seen by the first.
    await fetch(`${second.gateway.url}/admin/v1/credentials/cred-a/reset`, { method: 'POST', headers: { authorization: `Bearer ${adminToken}` } });
    const back = await eventually(
      () => credentials(first),
      (list) => list.find((entry) => entry['id'] === 'cred-a')?.['state'] === 'healthy',
    );
    expect(back.find((entry) => entry['id'] === 'cred-a')?.['state']).toBe('healthy');
  });

  it("each gateway counts the other's requests in flight", async () => {
    upstreams.d.options = { chunkDelayMs: 300 };
    try {
      const stream = await client(first).chat.completions.create({ model: 'only-d', messages: [{ role: 'user', content: 'Slowly' }], stream: true });
      const seen = await eventually(
        () => credentials(second),
        (list) => list.find((entry) => entry['id'] === 'cred-d')?.['in_flight'] === 1,
      );
      expect(seen.find((entry) => entry['id'] === 'cred-d')?.['in_flight']).toBe(1);
      for await (const _chunk of stream);
      const after = await eventually(
        () => credentials(second),
        (list) => list.find((entry) => entry['id'] === 'cred-d')?.['in_flight'] === 0,
      );
      expect(after.find((entry) => entry['id'] === 'cred-d')?.['in_flight']).toBe(0);
    } finally {
      upstreams.d.options = {};
    }
  });

  it('a Redis lost while running costs no request: one warning, and the state catches up when it returns', async () => {
    const proxy = await FaultyProxy.inFrontOf(url);
    const logLines: Array<Record<string, unknown>> = [];
    const third = await startTestGateway({ ...document(proxy.url), database: { url: `sqlite:${first.directory}/switchyard.db` } }, { logLines });
    try {
      const ask = (content: string, headers: Record<string, string> = {}) =>
        client(third)
          .chat.completions.create({ model: 'pool', messages: [{ role: 'user', content }] }, { headers })
          .withResponse();
      expect((await ask('before')).response.status).toBe(200);
      proxy.cut();
      for (let request = 0; request < 5; request++) {
        const { response } = await ask(`during ${request}`, { 'X-Session-Id': `outage-${request}` });
        expect(response.status).toBe(200);
        expect(response.headers.get('x-session-affinity')).toBe('new');
      }
      // A cooldown decided while Redis is away…
      upstreams.d.failNext({ status: 429, headers: { 'retry-after': '60' } });
      await client(third)
        .chat.completions.create({ model: 'only-d', messages: [{ role: 'user', content: 'Hi' }] })
        .catch(() => undefined);
      const warnings = logLines.filter((line) => String(line['msg']).startsWith('shared state unreachable'));
      expect(warnings).toHaveLength(1);
      expect(JSON.stringify(warnings)).not.toContain('sk-');
      proxy.restore();
      await eventually(
        async () => logLines.some((line) => String(line['msg']).startsWith('shared state answers again')),
        (recovered) => recovered,
        8_000,
      );
      expect(logLines.filter((line) => String(line['msg']).startsWith('shared state answers again'))).toHaveLength(1);
      // …reaches the gateways that never lost it.
      const seen = await eventually(
        () => credentials(first),
        (list) => list.find((entry) => entry['id'] === 'cred-d')?.['state'] === 'cooling',
      );
      expect(seen.find((entry) => entry['id'] === 'cred-d')?.['state']).toBe('cooling');
      expect(logLines.some((line) => line['level'] === 50)).toBe(false);
    } finally {
      await third.close();
      await proxy.close();
      await fetch(`${first.gateway.url}/admin/v1/credentials/cred-d/reset`, { method: 'POST', headers: { authorization: `Bearer ${adminToken}` } });
    }
  });

  it('refuses to start when Redis cannot be reached, naming the URL without its password', async () => {
    await expect(startTestGateway(document('redis://:hunter2@127.0.0.1:1/0'))).rejects.toThrow(
      /state\.url: cannot reach Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:1\/0/,
    );
  });
});
