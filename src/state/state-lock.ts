import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SharedState } from './shared-state.js';

export interface StateLockOptions {
  /** How long a holder keeps the lock at most: a process that dies holding it frees it after this. */
  leaseMs?: number;
  /** How often a waiter asks again. */
  pollMs?: number;
}

/**
 * Runs `task` while holding the lock `name` in every process sharing `state` (a Redis server, or
 * this process alone with the memory state). Taken by writing a random value only when absent;
 * released by replacing exactly that value, so a holder whose lease ran out never frees the next
 * holder's lock. A waiter asks again every `pollMs`; after twice the lease it stops waiting and
 * fails, since a holder alive that long is stuck.
 */
export async function withStateLock<T>(state: SharedState, name: string, task: () => Promise<T>, options: StateLockOptions = {}): Promise<T> {
  const leaseMs = options.leaseMs ?? 30_000;
  const pollMs = options.pollMs ?? 50;
  const key = `lock:${name}`;
  const holder = randomBytes(12).toString('hex');
  const giveUpAt = Date.now() + 2 * leaseMs;
  while ((await state.setIfAbsent(key, holder, leaseMs)) !== holder) {
    if (Date.now() >= giveUpAt) throw new Error(`the lock ${name} stayed taken for ${2 * leaseMs} ms`);
    await sleep(pollMs);
  }
  try {
    return await task();
  } finally {
    await state.compareAndSet(key, holder, 'released', 1).catch(() => undefined);
  }
}
