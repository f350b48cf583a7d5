import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { slidingWindowEstimate, type SharedState } from './shared-state.js';

/**
 * The time a contract run sees. Every check that depends on time reads and moves it through this
 * object, never through `Date.now` or a timer, so a backend decides what "time passes" means.
 */
export interface StateTestClock {
  now(): number;
  /** May return a promise: a clock backed by real time has to wait. */
  advance(ms: number): void | Promise<void>;
}

/**
 * A clock that moves only when told to: the default, for backends that take an injected clock
 * (MemoryState). It starts off any round number so alignment to the epoch is really exercised.
 */
export function manualClock(startMs = 1_700_000_000_123): StateTestClock {
  let time = startMs;
  return {
    now: () => time,
    advance: (ms) => {
      time += ms;
    },
  };
}

export interface StateContractOptions {
  /**
   * A Redis server keeps its own time for TTLs, which an injected clock cannot move. Its backend
   * will pass a clock whose `advance` really waits (and keep TTLs and windows in tests long enough
   * to outlast a round trip) or one that moves the server's time; the checks of exact expiry
   * boundaries assume a clock that moves only on `advance`.
   */
  createClock?: () => StateTestClock;
}

const TTL_MS = 1_000;
const WINDOW_MS = 1_000;

/** The behaviour every SharedState backend must have; each backend's test file calls this once. */
export function describeStateContract(
  name: string,
  open: (clock: StateTestClock) => Promise<SharedState>,
  { createClock = () => manualClock() }: StateContractOptions = {},
): void {
  describe(`shared state contract: ${name}`, () => {
    let clock: StateTestClock;
    let state: SharedState;

    beforeEach(async () => {
      clock = createClock();
      state = await open(clock);
    });
    afterEach(async () => {
      await state.close();
    });

    /** Moves to `offsetMs` into the next window, so a test knows where the boundaries are. */
    async function enterNextWindow(offsetMs = 0): Promise<number> {
      const windowStartMs = (Math.floor(clock.now() / WINDOW_MS) + 1) * WINDOW_MS;
      await clock.advance(windowStartMs + offsetMs - clock.now());
      return windowStartMs;
    }

    it('reads back what it set, and null for what it never had', async () => {
      await state.set('session:1', 'credential-a', TTL_MS);
      expect(await state.get('session:1')).toBe('credential-a');
      expect(await state.get('session:2')).toBeNull();
      await state.set('empty', '', TTL_MS);
      expect(await state.get('empty')).toBe('');
    });

    it('replaces both the value and its TTL on set', async () => {
      await state.set('key', 'first', TTL_MS);
      await clock.advance(TTL_MS / 2);
      await state.set('key', 'second', 2 * TTL_MS);
      await clock.advance(TTL_MS);
      expect(await state.get('key')).toBe('second');
    });

    it('deletes, saying whether something live was there', async () => {
      await state.set('key', 'value', TTL_MS);
      expect(await state.delete('key')).toBe(true);
      expect(await state.get('key')).toBeNull();
      expect(await state.delete('key')).toBe(false);
      await state.set('expiring', 'value', TTL_MS);
      await clock.advance(TTL_MS);
      expect(await state.delete('expiring')).toBe(false);
    });

    it('expires a value exactly at its TTL, and it stays gone', async () => {
      await state.set('key', 'value', TTL_MS);
      await clock.advance(TTL_MS - 1);
      expect(await state.get('key')).toBe('value');
      await clock.advance(1);
      expect(await state.get('key')).toBeNull();
      await clock.advance(10 * TTL_MS);
      expect(await state.get('key')).toBeNull();
    });

    it('touch makes a live value expire ttlMs from now, which may also shorten it', async () => {
      await state.set('key', 'value', TTL_MS);
      await clock.advance(TTL_MS - 100);
      expect(await state.touch('key', TTL_MS)).toBe(true);
      await clock.advance(TTL_MS - 1);
      expect(await state.get('key')).toBe('value');
      await clock.advance(1);
      expect(await state.get('key')).toBeNull();
      expect(await state.touch('key', TTL_MS)).toBe(false);
      expect(await state.get('key')).toBeNull();
      expect(await state.touch('never-set', TTL_MS)).toBe(false);

      await state.set('long', 'value', 100 * TTL_MS);
      expect(await state.touch('long', TTL_MS)).toBe(true);
      await clock.advance(TTL_MS);
      expect(await state.get('long')).toBeNull();
    });

    it('setIfAbsent keeps a live value and its TTL, and replaces an expired one', async () => {
      expect(await state.setIfAbsent('key', 'first', TTL_MS)).toBe('first');
      await clock.advance(TTL_MS / 2);
      expect(await state.setIfAbsent('key', 'second', 100 * TTL_MS)).toBe('first');
      await clock.advance(TTL_MS / 2);
      expect(await state.get('key')).toBeNull();
      expect(await state.setIfAbsent('key', 'third', TTL_MS)).toBe('third');
      expect(await state.get('key')).toBe('third');
    });

    it('of 50 racing setIfAbsent calls exactly one wins, and all are told its value', async () => {
      const candidates = Array.from({ length: 50 }, (_, index) => `credential-${index}`);
      const results = await Promise.all(candidates.map((value) => state.setIfAbsent('session:race', value, TTL_MS)));
      const winner = results[0];
      expect(candidates).toContain(winner);
      expect(new Set(results)).toEqual(new Set([winner]));
      expect(await state.get('session:race')).toBe(winner);
    });

    it('compareAndSet replaces only the expected value, an expired one counting as absent', async () => {
      expect(await state.compareAndSet('key', null, 'a', TTL_MS)).toBe(true);
      expect(await state.compareAndSet('key', null, 'b', TTL_MS)).toBe(false);
      expect(await state.compareAndSet('key', 'wrong', 'b', TTL_MS)).toBe(false);
      expect(await state.get('key')).toBe('a');
      expect(await state.compareAndSet('key', 'a', 'b', 2 * TTL_MS)).toBe(true);
      await clock.advance(TTL_MS);
      expect(await state.get('key')).toBe('b');
      await clock.advance(TTL_MS);
      expect(await state.compareAndSet('key', 'b', 'c', TTL_MS)).toBe(false);
      expect(await state.compareAndSet('key', null, 'c', TTL_MS)).toBe(true);
      expect(await state.get('key')).toBe('c');
    });

    it('of racing compareAndSet calls from the same value, exactly one succeeds', async () => {
      await state.set('session:failover', 'credential-a', TTL_MS);
      const candidates = Array.from({ length: 20 }, (_, index) => `credential-${index}`);
      const results = await Promise.all(candidates.map((value) => state.compareAndSet('session:failover', 'credential-a', value, TTL_MS)));
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await state.get('session:failover')).toBe(candidates[results.indexOf(true)]);
    });

    it('counts in windows aligned to multiples of windowMs since the epoch', async () => {
      const windowStartMs = await enterNextWindow(100);
      expect(windowStartMs % WINDOW_MS).toBe(0);
      expect(await state.addToWindow('team:search', 3, WINDOW_MS)).toEqual({ current: 3, previous: 0, windowStartMs, windowMs: WINDOW_MS });
      expect((await state.addToWindow('team:search', 4, WINDOW_MS)).current).toBe(7);
      expect((await state.addToWindow('team:search', 0, WINDOW_MS)).current).toBe(7);
      expect((await state.addToWindow('team:search', -2, WINDOW_MS)).current).toBe(5);
      expect((await state.addToWindow('team:search', 0.5, WINDOW_MS)).current).toBe(5.5);
    });

    it('rolls the window over at its boundary, and forgets it two windows on', async () => {
      const windowStartMs = await enterNextWindow();
      await state.addToWindow('team:search', 7, WINDOW_MS);
      await clock.advance(WINDOW_MS - 1);
      expect(await state.addToWindow('team:search', 0, WINDOW_MS)).toMatchObject({ current: 7, previous: 0, windowStartMs });
      await clock.advance(1);
      expect(await state.addToWindow('team:search', 2, WINDOW_MS)).toEqual({
        current: 2,
        previous: 7,
        windowStartMs: windowStartMs + WINDOW_MS,
        windowMs: WINDOW_MS,
      });
      await clock.advance(WINDOW_MS);
      expect(await state.addToWindow('team:search', 0, WINDOW_MS)).toMatchObject({ current: 0, previous: 2 });
      await clock.advance(WINDOW_MS);
      expect(await state.addToWindow('team:search', 0, WINDOW_MS)).toMatchObject({ current: 0, previous: 0 });
    });

    it('a window with nothing counted in between leaves no previous', async () => {
      await enterNextWindow(WINDOW_MS / 2);
      await state.addToWindow('team:search', 5, WINDOW_MS);
      await clock.advance(2 * WINDOW_MS);
      expect(await state.addToWindow('team:search', 1, WINDOW_MS)).toMatchObject({ current: 1, previous: 0 });
    });

    it('a read of a counter never counted in is zero, and counts nothing', async () => {
      const windowStartMs = await enterNextWindow(10);
      expect(await state.addToWindow('team:none', 0, WINDOW_MS)).toEqual({ current: 0, previous: 0, windowStartMs, windowMs: WINDOW_MS });
      expect((await state.addToWindow('team:none', 1, WINDOW_MS)).current).toBe(1);
    });

    it('keeps values, and counters of different window lengths, apart under the same key', async () => {
      await enterNextWindow();
      await state.addToWindow('team:search', 1, WINDOW_MS);
      await state.addToWindow('team:search', 10, 60 * WINDOW_MS);
      expect(await state.get('team:search')).toBeNull();
      await state.set('team:search', 'value', TTL_MS);
      expect((await state.addToWindow('team:search', 0, WINDOW_MS)).current).toBe(1);
      expect((await state.addToWindow('team:search', 0, 60 * WINDOW_MS)).current).toBe(10);
      expect(await state.get('team:search')).toBe('value');
    });

    it('sums concurrent increments exactly, each call seeing a distinct total', async () => {
      await enterNextWindow(1);
      const results = await Promise.all(Array.from({ length: 100 }, () => state.addToWindow('team:busy', 1, WINDOW_MS)));
      expect(results.map((result) => result.current).sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, index) => index + 1));
      expect((await state.addToWindow('team:busy', 0, WINDOW_MS)).current).toBe(100);
    });

    it('gives what slidingWindowEstimate needs', async () => {
      await enterNextWindow();
      await state.addToWindow('team:search', 10, WINDOW_MS);
      await clock.advance(WINDOW_MS + WINDOW_MS / 4);
      const count = await state.addToWindow('team:search', 4, WINDOW_MS);
      expect(slidingWindowEstimate(count, clock.now())).toBe(10 * 0.75 + 4);
    });

    it('rejects invalid arguments with a TypeError, changing nothing', async () => {
      for (const invalid of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
        await expect(state.set('key', 'value', invalid)).rejects.toThrow(TypeError);
        await expect(state.setIfAbsent('key', 'value', invalid)).rejects.toThrow(TypeError);
        await expect(state.compareAndSet('key', null, 'value', invalid)).rejects.toThrow(TypeError);
        await expect(state.addToWindow('team', 1, invalid)).rejects.toThrow(TypeError);
      }
      expect(await state.get('key')).toBeNull();
      await state.set('key', 'value', TTL_MS);
      await expect(state.touch('key', 0)).rejects.toThrow(TypeError);
      for (const invalid of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
        await expect(state.addToWindow('team', invalid, WINDOW_MS)).rejects.toThrow(TypeError);
      }
      expect((await state.addToWindow('team', 0, WINDOW_MS)).current).toBe(0);
      await clock.advance(TTL_MS);
      expect(await state.get('key')).toBeNull();
    });

    it('after close every operation rejects, and closing again is harmless', async () => {
      const other = await open(clock);
      await other.close();
      await expect(other.get('key')).rejects.toThrow();
      await expect(other.set('key', 'value', TTL_MS)).rejects.toThrow();
      await expect(other.addToWindow('team', 1, WINDOW_MS)).rejects.toThrow();
      await expect(other.close()).resolves.toBeUndefined();
    });

    it('leaves no timer behind once closed', async () => {
      // Counts only timers that keep the process alive; MemoryState's own test checks its sweeper.
      const timeouts = (): number => process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;
      const before = timeouts();
      const other = await open(clock);
      await other.set('key', 'value', TTL_MS);
      await other.addToWindow('team', 1, WINDOW_MS);
      await other.close();
      expect(timeouts()).toBeLessThanOrEqual(before);
    });
  });
}
