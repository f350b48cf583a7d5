import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { RedisMeters } from './redis-meters.js';
import type { Meter } from './shared-state.js';

const REDIS_URL = process.env.TEST_REDIS_URL;
const PREFIX = `switchyard-test:${randomBytes(6).toString('hex')}:meters:`;

describe.skipIf(!REDIS_URL)('RedisMeters', () => {
  const clients: Redis[] = [];
  let admin: Redis;
  let testNumber = 0;

  beforeAll(async () => {
    admin = new Redis(REDIS_URL ?? '');
    await admin.ping();
  });

  afterEach(() => {
    vi.restoreAllMocks();
  });

  afterAll(async () => {
    const keys = await admin.keys(`${PREFIX}*`);
    if (keys.length > 0) await admin.unlink(...keys);
    await Promise.all([admin, ...clients].map((client) => client.quit()));
  });

  /** A process's meters: its own connection, the test's own keys, and a count of the scripts it sends. */
  function processMeters(prefix: string, clock?: () => number): { meters: RedisMeters; scripts: () => number } {
    const client = new Redis(REDIS_URL ?? '');
    clients.push(client);
    const evalsha = vi.spyOn(client, 'evalsha');
    const evaluate = vi.spyOn(client, 'eval');
    const meters = new RedisMeters(client, (group) => `${prefix}${group}`, clock);
    return { meters, scripts: () => evalsha.mock.calls.length + evaluate.mock.calls.length };
  }

  const testPrefix = (): string => `${PREFIX}${++testNumber}:`;
  const requests = (limit: number | null, amount = 1): Meter => ({ key: 'team:rpm', group: 'team', amount, limit, ttlMs: 60_000 });

  it('sends the charges asked in one turn in one script, each applied in the order asked', async () => {
    const { meters, scripts } = processMeters(testPrefix());
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => meters.charge([requests(15)])));
    expect(outcomes.map((outcome) => outcome.refused)).toEqual(Array.from({ length: 20 }, (_, index) => (index < 15 ? -1 : 0)));
    expect(outcomes.map((outcome) => outcome.values[0])).toEqual([...Array.from({ length: 15 }, (_, index) => index + 1), 15, 15, 15, 15, 15]);
    expect(scripts()).toBe(1);
  });

  it('applies a step again to a record another process changed since it was seen, and decides it on what Redis holds', async () => {
    const prefix = testPrefix();
    const first = processMeters(prefix);
    const second = processMeters(prefix);
    expect((await first.meters.charge([requests(7)])).values).toEqual([1]);
    expect((await second.meters.charge([requests(7, 5)])).values).toEqual([6]);
    const before = first.scripts();
    // The first process last saw 1: its first attempt finds the record changed, its second counts from 6.
    expect(await first.meters.charge([requests(7)])).toMatchObject({ refused: -1, values: [7] });
    expect(first.scripts() - before).toBe(2);
    expect(await first.meters.charge([requests(7)])).toMatchObject({ refused: 0, values: [7] });
  });

  it('counts nothing twice after a script that failed: what the failed step changed is not taken for what Redis holds', async () => {
    const prefix = testPrefix();
    const client = new Redis(REDIS_URL ?? '');
    clients.push(client);
    const meters = new RedisMeters(client, (group) => `${prefix}${group}`);
    expect((await meters.charge([requests(null)])).values).toEqual([1]);
    vi.spyOn(client, 'evalsha').mockRejectedValueOnce(new Error('connection lost'));
    await expect(meters.charge([requests(null)])).rejects.toThrow('connection lost');
    expect((await meters.charge([requests(null)])).values).toEqual([2]);
    expect(JSON.parse((await admin.get(`${prefix}team`)) ?? '')).toMatchObject({ c: { 'team:rpm': [2, expect.any(Number)] } });
  });

  it('replaces a record it cannot read rather than failing every charge of its group', async () => {
    const prefix = testPrefix();
    await admin.set(`${prefix}team`, 'not a record', 'PX', 60_000);
    const { meters } = processMeters(prefix);
    expect((await meters.charge([requests(null, 3)])).values).toEqual([3]);
    expect(JSON.parse((await admin.get(`${prefix}team`)) ?? '')).toMatchObject({ c: { 'team:rpm': [3, expect.any(Number)] } });
  });

  it("counts lifetimes on Redis's clock, not on a process clock that is minutes off", async () => {
    const prefix = testPrefix();
    const behind = processMeters(prefix, () => Date.now() - 10 * 60_000);
    const ahead = processMeters(prefix, () => Date.now() + 10 * 60_000);
    const meter = { key: 'team:in-flight', group: 'team', amount: 1, limit: null, ttlMs: 30_000, owner: 'behind' };
    expect((await behind.meters.charge([meter])).values).toEqual([1]);
    // Ten minutes ahead, a lease of 30 s taken ten minutes behind would have ended long ago.
    expect((await ahead.meters.charge([{ ...meter, owner: 'ahead' }])).values).toEqual([2]);
    expect((await behind.meters.charge([{ ...meter, amount: 0 }])).values).toEqual([2]);
  });
});
