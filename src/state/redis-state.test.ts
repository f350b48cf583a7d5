import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FaultyProxy } from '../../test/support/faulty-proxy.js';
import { RedisState } from './redis-state.js';
import { describeStateContract, type StateTestClock } from './state-contract.js';

const REDIS_URL = process.env.TEST_REDIS_URL;
/** Every run its own keys, so runs sharing a server (or one killed before cleaning up) never meet. */
const RUN_PREFIX = `switchyard-test:${randomBytes(6).toString('hex')}:`;

describe.skipIf(!REDIS_URL)('RedisState', () => {
  const url = REDIS_URL ?? '';
  let admin: Redis;
  /** The server's clock minus this process's: windows and field expiry run on the server's. */
  let serverOffsetMs = 0;
  let testNumber = 0;
  let keyPrefix = RUN_PREFIX;

  beforeAll(async () => {
    admin = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0 });
    await admin.connect();
    const before = Date.now();
    const [seconds = 0, microseconds = 0] = (await admin.time()).map(Number);
    serverOffsetMs = Math.round(seconds * 1_000 + microseconds / 1_000 - (before + Date.now()) / 2);
  });

  afterAll(async () => {
    // Every key has a TTL anyway; this is so a run leaves nothing behind even for a minute.
    for await (const batch of admin.scanStream({ match: `${RUN_PREFIX}*`, count: 1_000 })) {
      const keys: unknown = batch;
      if (Array.isArray(keys) && keys.length > 0) await admin.unlink(...keys.map(String));
    }
    await admin.quit();
  });

  // Each test its own keys too: the contract's tests reuse key names, and what one left behind
  // (values with long TTLs, counters) would be in the next one's way, as it never is in memory.
  beforeEach(() => {
    testNumber += 1;
    keyPrefix = `${RUN_PREFIX}${testNumber}:`;
  });

  const open = (): Promise<RedisState> => RedisState.open(url, { keyPrefix });
  describeStateContract('redis', open, {
    createClock: () => serverClock(() => serverOffsetMs),
    // Waits of tens of milliseconds, and a margin at boundaries longer than a round trip to a
    // local server and the timer's lateness. Windows are longer than TTLs: a check makes a few
    // round trips (100 concurrent ones in one) that must all land in the window it entered.
    timing: { ttlMs: 80, windowMs: 300, boundaryMarginMs: 40 },
    openSecondHandle: open,
  });

  it("keeps a group's meters in one record that lives as long as its longest-lived entry, and creates nothing for a read", async () => {
    const state = await open();
    try {
      const meter = { key: 'holder:rpm', group: 'holder', amount: 0, limit: null, ttlMs: 5_000 };
      const slots = { key: 'holder:in-flight', group: 'holder', amount: 0, limit: null, ttlMs: 3_000, owner: 'process-1' };
      await state.charge([meter, { ...meter, key: 'holder:tokens' }, slots]);
      expect(await admin.keys(`${keyPrefix}*`)).toEqual([]);
      await state.charge([
        { ...meter, amount: 1 },
        { ...meter, key: 'holder:tokens', amount: 40, ttlMs: 8_000 },
        { ...slots, amount: 2 },
      ]);
      const record = `${keyPrefix}meter-records:holder`;
      expect(await admin.keys(`${keyPrefix}*`)).toEqual([record]);
      const ttl = await admin.pttl(record);
      expect(ttl).toBeGreaterThan(7_000);
      expect(ttl).toBeLessThanOrEqual(8_000);
      // What has expired is left out when the record is next written.
      await state.charge([{ ...meter, key: 'holder:minute', amount: 1, ttlMs: 50 }]);
      expect((await admin.get(record))?.includes('holder:minute')).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect((await state.charge([{ ...meter, key: 'holder:minute' }])).values).toEqual([0]);
      await state.charge([{ ...meter, amount: 1 }]);
      const text = await admin.get(record);
      expect(text?.includes('holder:minute')).toBe(false);
      expect(text?.includes('holder:tokens')).toBe(true);
      // A record left with nothing live goes.
      const alone = { ...slots, key: 'other:in-flight', group: 'other' };
      await state.charge([{ ...alone, amount: 1 }]);
      expect(await admin.exists(`${keyPrefix}meter-records:other`)).toBe(1);
      await state.charge([{ ...alone, amount: -1 }]);
      expect(await admin.exists(`${keyPrefix}meter-records:other`)).toBe(0);
    } finally {
      await state.close();
    }
  });

  describe('when Redis cannot be reached', () => {
    let proxy: FaultyProxy;

    beforeEach(async () => {
      proxy = await FaultyProxy.inFrontOf(url);
      return () => proxy.close();
    });

    it('fails fast, says so once, and works again, resubscribed, when Redis is back', async () => {
      const state = await RedisState.open(proxy.url, { keyPrefix });
      const direct = await open();
      try {
        const heard: boolean[] = [];
        state.onAvailability((available) => heard.push(available));
        const messages: string[] = [];
        await state.subscribe('events', (message) => messages.push(message));
        await state.set('key', 'value', 60_000);

        // A command written but not answered when the connection goes is rejected, not run again later.
        proxy.stall();
        const inFlight = state.addToWindow('team', 1, 60_000);
        await new Promise((resolve) => setTimeout(resolve, 20));
        proxy.cut();
        await expect(inFlight).rejects.toThrow();
        await eventually(() => heard.length > 0);

        for (const attempt of [
          () => state.get('key'),
          () => state.set('key', 'other', 60_000),
          () => state.compareAndSet('key', 'value', 'other', 60_000),
          () => state.addToWindow('team', 1, 60_000),
          () => state.setField('in-flight', 'replica-a', '1', 60_000),
          () => state.readFields('in-flight'),
          () => state.publish('events', 'lost'),
          () => state.subscribe('other', () => {}),
        ]) {
          const started = Date.now();
          await expect(attempt()).rejects.toThrow();
          expect(Date.now() - started).toBeLessThan(1_000);
        }
        // Several reconnection attempts fail meanwhile, and none of them is news.
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        expect(heard).toEqual([false]);

        proxy.restore();
        await eventually(() => heard.length > 1, 5_000);
        expect(heard).toEqual([false, true]);
        expect(await state.get('key')).toBe('value');
        const { current, previous } = await state.addToWindow('team', 0, 60_000);
        expect(current + previous).toBe(0);
        // `true` is said once the subscription is back, so this message cannot be missed.
        await direct.publish('events', 'after the outage');
        await eventually(() => messages.includes('after the outage'));
      } finally {
        await Promise.all([state.close(), direct.close()]);
      }
    });

    it('gives up on a connection that stops answering, within the command timeout, and reconnects', async () => {
      const state = await RedisState.open(proxy.url, { keyPrefix, commandTimeoutMs: 200 });
      try {
        const heard: boolean[] = [];
        state.onAvailability((available) => heard.push(available));
        await state.set('key', 'value', 60_000);
        // The host is gone without a reset: the sockets stay open and nothing comes back.
        proxy.stall();
        const started = Date.now();
        await expect(state.get('key')).rejects.toThrow(/timed out/);
        expect(Date.now() - started).toBeLessThan(500);
        await eventually(() => heard.length > 0);
        expect(heard).toEqual([false]);
        proxy.restore();
        await eventually(() => heard.length > 1, 5_000);
        expect(heard).toEqual([false, true]);
        expect(await state.get('key')).toBe('value');
      } finally {
        await state.close();
      }
    });

    it('keeps the connection made after an outage in which commands went unanswered', async () => {
      const state = await RedisState.open(proxy.url, { keyPrefix, commandTimeoutMs: 200 });
      try {
        const heard: boolean[] = [];
        state.onAvailability((available) => heard.push(available));
        proxy.stall();
        await expect(state.get('key')).rejects.toThrow(/timed out/);
        // Reset before the dead-connection timer (twice the command timeout) ends it: the
        // reconnection must not be dropped by that timer afterwards.
        proxy.cut();
        proxy.restore();
        await eventually(() => heard.length > 1, 5_000);
        await new Promise((resolve) => setTimeout(resolve, 800));
        expect(heard).toEqual([false, true]);
        expect(await state.get('key')).toBeNull();
      } finally {
        await state.close();
      }
    });
  });
});

/**
 * Real time as the server keeps it. `advance` waits at least `ms` (a timer may fire a millisecond
 * early), plus 2: Redis keeps a key through the millisecond its TTL ends in (it expires once its
 * time is past), where the contract has it gone from that millisecond on.
 */
function serverClock(offsetMs: () => number): StateTestClock {
  return {
    now: () => Date.now() + offsetMs(),
    advance: async (ms) => {
      const until = Date.now() + ms + 2;
      while (Date.now() < until) await new Promise((resolve) => setTimeout(resolve, until - Date.now()));
    },
  };
}

async function eventually(done: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`not done within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
