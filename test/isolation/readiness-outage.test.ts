import { setTimeout as delay } from 'node:timers/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { startFaultUpstream } from '../fake-upstreams/fault-upstream.js';
import { PrivatePostgres, postgresBinaries } from './support/private-postgres.js';
import { PrivateRedis, redisServerBinary } from './support/private-redis.js';
import { startStoreGateway, type StoreGateway } from './support/store-gateway.js';

/** `/ready` and `/health` as a load balancer's probe sees them: status and body. */
async function probe(gateway: StoreGateway, path: '/ready' | '/health'): Promise<{ status: number; body: unknown }> {
  // Bounded, so that a probe that hangs fails as such rather than as the test's own timeout.
  const response = await request(`${gateway.url}${path}`, { signal: AbortSignal.timeout(10_000) });
  return { status: response.statusCode, body: await response.body.json() };
}

/**
 * `/ready` while a dependency is down (issue 33): 503 `unavailable` with nothing more said, while
 * `/health` (liveness) stays 200, and 200 again once the dependency is back.
 */
async function expectReadinessFollows(gateway: StoreGateway, stop: () => Promise<void>, launch: () => Promise<void>): Promise<void> {
  expect(await probe(gateway, '/ready')).toEqual({ status: 200, body: { status: 'ready' } });
  await stop();
  try {
    await vi.waitFor(async () => expect(await probe(gateway, '/ready')).toEqual({ status: 503, body: { status: 'unavailable' } }), {
      timeout: 10_000,
      interval: 200,
    });
    expect((await probe(gateway, '/health')).status).toBe(200);
  } finally {
    await launch();
  }
  await vi.waitFor(async () => expect(await probe(gateway, '/ready')).toEqual({ status: 200, body: { status: 'ready' } }), { timeout: 20_000, interval: 200 });
}

describe.skipIf(redisServerBinary === undefined)('GET /ready with the shared state (Redis) away', () => {
  it('answers 503 unavailable while Redis is stopped, /health 200, and 200 once it is back', async () => {
    const upstream = await startFaultUpstream();
    const redis = await PrivateRedis.start();
    const directory = mkdtempSync(join(tmpdir(), 'switchyard-ready-redis-'));
    onTestFinished(async () => {
      await redis.close();
      await upstream.close();
      rmSync(directory, { recursive: true, force: true });
    });
    const gateway = await startStoreGateway(`sqlite:${join(directory, 'switchyard.db')}`, upstream.url, {
      state: { url: redis.url, key_prefix: 'switchyard-ready:' },
    });
    onTestFinished(() => gateway.close());
    await expectReadinessFollows(
      gateway,
      () => redis.stop(),
      () => redis.launch(),
    );
    expect(await gateway.stop()).toBe(0);
  }, 60_000);
});

describe.skipIf(postgresBinaries === undefined)('GET /ready with the database (PostgreSQL) away', () => {
  it('answers 503 unavailable while PostgreSQL is stopped, /health 200, and 200 once it is back', async () => {
    const upstream = await startFaultUpstream();
    const postgres = await PrivatePostgres.start();
    onTestFinished(async () => {
      await postgres.close();
      await upstream.close();
    });
    const gateway = await startStoreGateway(postgres.url, upstream.url);
    onTestFinished(() => gateway.close());
    await expectReadinessFollows(
      gateway,
      () => postgres.stop(),
      () => postgres.launch(),
    );
    // Bounded, so that a drain that hangs fails as such (seen in CI: this test at its 90 s).
    const exit = await Promise.race([gateway.stop(), delay(20_000, 'no exit within 20 s of SIGTERM', { ref: false })]);
    expect(exit).toBe(0);
  }, 90_000);
});
