import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SharedState } from './shared-state.js';

export interface StateLockOptions {
  /**
   * How long the lock outlives its holder's last renewal: a process that dies holding it frees it
   * after this. A live holder renews it every quarter of it, however long its task runs.
   */
  leaseMs?: number;
  /** How often a waiter asks again. */
  pollMs?: number;
  /** How long a waiter waits at most before it fails (default: twice the lease). */
  waitMs?: number;
}

/** What a task holding the lock may ask of it. */
export interface HeldLock {
  /**
   * Renews the lease now and resolves when the lock is still this holder's, with a full lease ahead;
   * rejects when another holder has it (this one's lease ran out) or the state cannot say. Called
   * before an action that must not run twice, such as spending a refresh token.
   */
  confirm(): Promise<void>;
}

export const DEFAULT_LOCK_LEASE_MS = 60_000;

/**
 * Runs `task` while holding the lock `name` in every process sharing `state` (a Redis server, or
 * this process alone with the memory state). Taken by writing a random value only when absent;
 * renewed every quarter lease by replacing exactly that value (so only its holder renews it, and a
 * task may run longer than the lease); released the same way, so a holder whose lease ran out never
 * frees the next holder's lock. A waiter asks again every `pollMs` and fails after `waitMs`.
 *
 * A state that cannot be reached while taking the lock rejects with "shared state unavailable"
 * (the backend's own error as its `cause`): what failed, said in words an operator can act on.
 */
export async function withStateLock<T>(state: SharedState, name: string, task: (lock: HeldLock) => Promise<T>, options: StateLockOptions = {}): Promise<T> {
  const leaseMs = options.leaseMs ?? DEFAULT_LOCK_LEASE_MS;
  const pollMs = options.pollMs ?? 50;
  const waitMs = options.waitMs ?? 2 * leaseMs;
  const key = `lock:${name}`;
  const holder = randomBytes(12).toString('hex');
  const giveUpAt = Date.now() + waitMs;
  while ((await take(state, key, holder, leaseMs)) !== holder) {
    if (Date.now() >= giveUpAt) throw new Error(`it stayed taken for ${waitMs} ms`);
    await sleep(pollMs);
  }
  const renew = async (): Promise<boolean> => state.compareAndSet(key, holder, holder, leaseMs);
  // Renewal failures are not fatal here: the lease left covers a short outage, and `confirm` is
  // what a task asks before anything that must not run twice.
  const renewal = setInterval(() => void renew().catch(() => undefined), Math.max(1, Math.floor(leaseMs / 4)));
  renewal.unref();
  const lock: HeldLock = {
    confirm: async () => {
      let held: boolean;
      try {
        held = await renew();
      } catch (error) {
        throw new Error('could not confirm the lock: shared state unavailable', { cause: error });
      }
      if (!held) throw new Error('the lock was lost: its lease ran out and another holder may have it');
    },
  };
  try {
    return await task(lock);
  } finally {
    clearInterval(renewal);
    await state.compareAndSet(key, holder, 'released', 1).catch(() => undefined);
  }
}

async function take(state: SharedState, key: string, holder: string, leaseMs: number): Promise<string> {
  try {
    return await state.setIfAbsent(key, holder, leaseMs);
  } catch (error) {
    if (error instanceof TypeError) throw error;
    throw new Error('shared state unavailable', { cause: error });
  }
}
