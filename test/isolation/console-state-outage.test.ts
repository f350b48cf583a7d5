import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { startFaultUpstream, type FaultUpstream } from '../fake-upstreams/fault-upstream.js';
import { PrivateRedis, redisServerBinary } from './support/private-redis.js';
import { startStoreGateway } from './support/store-gateway.js';

/** Every admin read an operator's console makes. */
const ADMIN_READS = ['/admin/v1/teams', '/admin/v1/tokens', '/admin/v1/credentials', '/admin/v1/requests', '/admin/v1/usage', '/admin/v1/console/session'];

describe.skipIf(redisServerBinary === undefined)('the shared state (Redis) away under the admin API and the console', () => {
  let redis: PrivateRedis;
  let upstream: FaultUpstream;
  let directory: string;
  beforeAll(async () => {
    upstream = await startFaultUpstream();
    redis = await PrivateRedis.start();
    directory = mkdtempSync(join(tmpdir(), 'switchyard-state-outage-'));
  });
  afterAll(async () => {
    await redis?.close();
    await upstream?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it('answers 503 state_unavailable to the console, never 500, and signs in again once Redis is back', async () => {
    const gateway = await startStoreGateway(`sqlite:${join(directory, 'switchyard.db')}`, upstream.url, {
      state: { url: redis.url, key_prefix: 'switchyard-isolation:' },
    });
    onTestFinished(() => gateway.close());
    const call = async (method: 'GET' | 'POST', path: string, headers: Record<string, string>) => {
      const response = await request(`${gateway.url}${path}`, { method, headers });
      const text = await response.body.text();
      const body = (text === '' ? {} : JSON.parse(text)) as { error?: { code?: string } };
      return { status: response.statusCode, code: body.error?.code, cookie: String(response.headers['set-cookie'] ?? '').split(';')[0] ?? '' };
    };
    const bearer = { authorization: `Bearer ${gateway.token}` };
    const signIn = await call('POST', '/admin/v1/console/session', bearer);
    expect(signIn.status).toBe(201);
    const cookie = { cookie: signIn.cookie };
    expect((await call('GET', '/admin/v1/tokens', cookie)).status).toBe(200);

    await redis.stop();
    try {
      expect(await call('POST', '/admin/v1/console/session', bearer)).toMatchObject({ status: 503, code: 'state_unavailable' });
      for (const path of ADMIN_READS) {
        expect({ path, ...(await call('GET', path, cookie)) }).toMatchObject({ path, status: 503, code: 'state_unavailable' });
        const answer = await call('GET', path, bearer);
        expect({ path, status: answer.status }).not.toMatchObject({ status: 500 });
      }
    } finally {
      await redis.launch();
    }
    // A restarted Redis is empty: the sign-in is gone, and a new one works.
    await vi.waitFor(async () => expect((await call('POST', '/admin/v1/console/session', bearer)).status).toBe(201), { timeout: 10_000, interval: 200 });
    expect(gateway.rawLines.join('\n')).not.toMatch(/unhandled error|uncaught exception/);
    expect(await gateway.stop()).toBe(0);
  }, 40_000);
});
