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
          withStateLock(states[index % states.length] as SharedState, lockName, async () => {
            inside++;
            most = Math.max(most, inside);
            await sleep(5);
            order.push(index);
            inside--;
          }, { pollMs: 5 }),
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
      await expect(withStateLock(state as SharedState, lockName, async () => (state as SharedState).get(`lock:${lockName}`), { pollMs: 5 })).resolves.not.toBe('someone-gone');
    });
  });
}

describeLock('the memory state', async () => [new MemoryState()]);

describe.skipIf(!REDIS_URL)('with Redis', () => {
  const prefix = `switchyard-test:${randomBytes(6).toString('hex')}:`;
  describeLock('Redis, two connections', async () => Promise.all([0, 1].map(() => RedisState.open(REDIS_URL ?? '', { keyPrefix: prefix }))));
});
