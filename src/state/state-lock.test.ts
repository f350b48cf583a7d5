import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryState } from './memory-state.js';
import { RedisState } from './redis-state.js';
import type { SharedState } from './shared-state.js';
import { withStateLock } from './state-lock.js';

const REDIS_URL = process.env.TEST_REDIS_URL;

function describeLock(name: string, open: () => Promise<SharedState[]>): void {
  describe(`withStateLock over ${name}`, () => {
    const opened: SharedState[] = [];
    afterAll(async () => {
      await Promise.all(opened.map((state) => state.close()));
    });

    it('runs one holder at a time across every process sharing the state', async () => {
      const states = await open();
      opened.push(...states);
      const lockName = `test-${randomBytes(4).toString('hex')}`;
      let inside = 0;
      let most = 0;
      const order: number[] = [];
      await Promise.all(
        Array.from({ length: 12 }, (_, index) =>
          withStateLock(
            states[index % states.length] as SharedState,
            lockName,
            async () => {
              inside++;
              most = Math.max(most, inside);
              await sleep(5);
              order.push(index);
              inside--;
            },
            { pollMs: 5 },
          ),
        ),
      );
      expect(most).toBe(1);
      expect(order).toHaveLength(12);
    });

    it('is free again after a holder failed, and a dead holder frees it when its lease ends', async () => {
      const [state] = await open();
      opened.push(state as SharedState);
      const lockName = `test-${randomBytes(4).toString('hex')}`;
      await expect(withStateLock(state as SharedState, lockName, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
      await expect(withStateLock(state as SharedState, lockName, async () => 'next')).resolves.toBe('next');
      // A holder that never released (a process that died): its lease runs out.
      await (state as SharedState).set(`lock:${lockName}`, 'someone-gone', 50);
      await expect(withStateLock(state as SharedState, lockName, async () => (state as SharedState).get(`lock:${lockName}`), { pollMs: 5 })).resolves.not.toBe(
        'someone-gone',
      );
    });

    it('is renewed while its task runs longer than the lease, so no one else takes it meanwhile', async () => {
      const [state] = await open();
      opened.push(state as SharedState);
      const lockName = `test-${randomBytes(4).toString('hex')}`;
      const inside: string[] = [];
      const long = withStateLock(
        state as SharedState,
        lockName,
        async (lock) => {
          inside.push('long');
          await sleep(400);
          await lock.confirm();
          inside.push('long done');
        },
        { leaseMs: 100, pollMs: 5 },
      );
      await sleep(20);
      const next = withStateLock(
        state as SharedState,
        lockName,
        async () => {
          inside.push('next');
        },
        { leaseMs: 100, pollMs: 5, waitMs: 2_000 },
      );
      await Promise.all([long, next]);
      expect(inside).toEqual(['long', 'long done', 'next']);
    });

    it('tells a holder that lost its lock when it confirms', async () => {
      const [state] = await open();
      opened.push(state as SharedState);
      const lockName = `test-${randomBytes(4).toString('hex')}`;
      const confirmed = withStateLock(state as SharedState, lockName, async (lock) => {
        // Another process took it over (as after the lease ran out during a pause).
        await (state as SharedState).set(`lock:${lockName}`, 'someone-else', 60_000);
        await lock.confirm();
      });
      await expect(confirmed).rejects.toThrow('the lock was lost');
      expect(await (state as SharedState).get(`lock:${lockName}`)).toBe('someone-else');
    });
  });
}

describe('withStateLock over a state that is unavailable', () => {
  it("says the shared state is unavailable, with the backend's error as the cause", async () => {
    const state = new MemoryState();
    state.setIfAbsent = async () => Promise.reject(new Error("Stream isn't writeable and enableOfflineQueue options is false"));
    const taken = withStateLock(state, 'down', async () => 'ran');
    await expect(taken).rejects.toThrow(/^shared state unavailable$/);
    await expect(taken).rejects.toHaveProperty('cause.message', "Stream isn't writeable and enableOfflineQueue options is false");
    await state.close();
  });
});

describeLock('the memory state', async () => [new MemoryState()]);

describe.skipIf(!REDIS_URL)('with Redis', () => {
  const prefix = `switchyard-test:${randomBytes(6).toString('hex')}:`;
  describeLock('Redis, two connections', async () => Promise.all([0, 1].map(() => RedisState.open(REDIS_URL ?? '', { keyPrefix: prefix }))));
});
