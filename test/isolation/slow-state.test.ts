import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../fake-upstreams/openai-upstream.js';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';
import { FaultyProxy } from '../support/faulty-proxy.js';
import { PrivateRedis, redisServerBinary } from './support/private-redis.js';

/** `state.request_timeout_ms`'s default: what a request may wait for one state operation. */
const BUDGET_MS = 150;
/** A request with limits and a session awaits two state operations (its admission, its binding). */
const BOUND_MS = 2 * BUDGET_MS + 400;
const DOWN_MESSAGE = 'shared state unreachable';
const UP_MESSAGE = 'shared state answers again';

/**
 * A gateway whose Redis becomes slow (500 ms and 1.5 s each way) or silent: every request's wait
 * on the state is bounded by the budget, the state is declared down after a few failures with one
 * warning and a counter in /health, requests stop waiting on it (limits let through, as
 * docs/limits.md promises for an outage), and once it answers again limits are enforced again.
 */
describe.skipIf(redisServerBinary === undefined)('a slow or silent Redis', () => {
  let redis: PrivateRedis;
  let proxy: FaultyProxy;
  let upstream: FakeOpenAIUpstream;
  let gateway: TestGateway;
  const logLines: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    proxy = await FaultyProxy.start(redis.port);
    upstream = await startFakeOpenAIUpstream();
    gateway = await startTestGateway(
      {
        state: { url: proxy.proxied(redis.url), key_prefix: 'slow-state:' },
        upstreams: [{ id: 'primary', provider: 'openai', base_url: upstream.url, api_key: 'sk-upstream' }],
        models: [{ id: 'chat', type: 'chat', routes: [{ upstream: 'primary', model: 'upstream-chat' }] }],
      },
      { logLines },
    );
  });

  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await proxy?.close();
    await redis?.close();
  });

  let tokenNumber = 0;
  async function limitedToken(limits: { rpm: number; maxConcurrent?: number }): Promise<string> {
    return (await gateway.gateway.tokens.create({ team: `slow-state-${++tokenNumber}`, limits })).secret;
  }

  /** A chat completion with a session (so its binding is read too); its status and how long it took. */
  async function ask(secret: string): Promise<{ status: number; ms: number }> {
    const started = performance.now();
    const response = await fetch(`${gateway.gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'x-session-id': `session-${tokenNumber}` },
      body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hello' }] }),
    });
    await response.arrayBuffer();
    return { status: response.status, ms: performance.now() - started };
  }

  async function health(): Promise<{ status: string; shared_state?: { available: boolean; outages: number; timeouts: number } }> {
    return (await (await fetch(`${gateway.gateway.url}/health`)).json()) as {
      status: string;
      shared_state?: { available: boolean; outages: number; timeouts: number };
    };
  }

  const lines = (message: string): number => logLines.filter((line) => String(line['msg']).startsWith(message)).length;

  it.each([
    ['500 ms away', 500, (faulty: FaultyProxy) => faulty.slow(500)],
    ['1.5 s away', 1_500, (faulty: FaultyProxy) => faulty.slow(1_500)],
    ['silent', 0, (faulty: FaultyProxy) => faulty.blackhole()],
  ])(
    'Redis %s: requests wait at most the budget, one warning, and limits are back once it answers',
    async (_name, delayMs, degrade) => {
      // One request in flight at most: a slot an admission took after its request stopped waiting would show.
      const secret = await limitedToken({ rpm: 1_000, maxConcurrent: 1 });
      expect((await ask(secret)).status).toBe(200);
      const downBefore = lines(DOWN_MESSAGE);
      const upBefore = lines(UP_MESSAGE);
      const outagesBefore = (await health()).shared_state?.outages ?? 0;

      degrade(proxy);
      const answers: Array<{ status: number; ms: number }> = [];
      for (let index = 0; index < 8; index++) answers.push(await ask(secret));
      expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
      expect(Math.max(...answers.map((answer) => answer.ms))).toBeLessThan(BOUND_MS);
      expect(lines(DOWN_MESSAGE) - downBefore).toBe(1);
      expect(await health()).toMatchObject({ status: 'ok', shared_state: { available: false, outages: outagesBefore + 1 } });

      // What was sent before it was declared down reaches Redis and is answered (or not) meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 2 * delayMs + 300));
      // Cut before restoring: the proxy would otherwise carry new bytes ahead of the ones it still
      // delays, an order no TCP connection has. The gateway reconnects, as after any outage.
      proxy.cut();
      proxy.restore();
      await vi.waitFor(async () => expect((await health()).shared_state?.available).toBe(true), { timeout: 10_000, interval: 100 });
      expect(lines(UP_MESSAGE) - upBefore).toBe(1);

      // The admissions Redis ran after their requests went on were given back: the slot is free.
      expect((await ask(secret)).status).toBe(200);
      // Limits are enforced again: an rpm of 2 refuses within five requests (whatever minute boundary falls between).
      const limited = await limitedToken({ rpm: 2 });
      const statuses: number[] = [];
      for (let index = 0; index < 5; index++) statuses.push((await ask(limited)).status);
      expect(statuses.slice(0, 2)).toEqual([200, 200]);
      expect(statuses).toContain(429);
    },
    40_000,
  );
});
