import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FaultyProxy } from '../support/faulty-proxy.js';
import { PrivatePostgres, postgresBinaries } from './support/private-postgres.js';
import { PrivateRedis, redisServerBinary } from './support/private-redis.js';

// The isolation suites' own servers: they must start, answer, and come back after an outage, or
// every suite built on them tests nothing.
describe.skipIf(redisServerBinary === undefined)('a private Redis', () => {
  let redis: PrivateRedis;
  beforeAll(async () => {
    redis = await PrivateRedis.start();
  });
  afterAll(async () => redis?.close());

  it('answers, is slowed and cut through the proxy, and restarts empty on its port', async () => {
    const proxy = await FaultyProxy.start(redis.port);
    const client = new Redis(proxy.proxied(redis.url), { maxRetriesPerRequest: 0, lazyConnect: true });
    try {
      await client.connect();
      await client.set('k', 'v');
      expect(await client.get('k')).toBe('v');
      proxy.slow(300);
      const started = performance.now();
      await client.get('k');
      expect(performance.now() - started).toBeGreaterThanOrEqual(550);
      proxy.restore();
      await redis.stop();
      await expect(client.get('k')).rejects.toThrow();
      await redis.launch();
      const direct = new Redis(redis.url);
      expect(await direct.get('k')).toBeNull();
      direct.disconnect();
    } finally {
      client.disconnect();
      await proxy.close();
    }
  });
});

describe.skipIf(postgresBinaries === undefined)('a private PostgreSQL', () => {
  let postgres: PrivatePostgres;
  beforeAll(async () => {
    postgres = await PrivatePostgres.start();
  }, 60_000);
  afterAll(async () => postgres?.close());

  it('answers, keeps its data across a stop, and hangs while paused', async () => {
    const client = new pg.Client({ connectionString: postgres.url });
    await client.connect();
    await client.query('create table kept (value text)');
    await client.query("insert into kept values ('yes')");
    await client.end();
    await postgres.stop();
    await postgres.launch();
    const again = new pg.Client({ connectionString: postgres.url, query_timeout: 1_000 });
    again.on('error', () => undefined);
    await again.connect();
    expect((await again.query('select value from kept')).rows).toEqual([{ value: 'yes' }]);
    await postgres.pause();
    await expect(again.query('select 1')).rejects.toThrow(/timeout/i);
    await postgres.resume();
    await again.end().catch(() => undefined);
  }, 60_000);
});
