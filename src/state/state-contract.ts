import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SharedState } from './shared-state.js';
import { describeBudgetChecks } from './state-budget-contract.js';
import { describeMapAndMessageChecks } from './state-message-contract.js';
import { describeMeterChecks } from './state-meter-contract.js';
import { describeValueChecks } from './state-value-contract.js';
import { describeWindowChecks } from './state-window-contract.js';

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

/** The lengths of time the checks use; see StateContractOptions.timing. */
export interface StateContractTiming {
  /** The TTL most checks give; an even number, since some wait half of it. */
  ttlMs: number;
  /** The window length most checks count in; a multiple of 100, since some wait a hundredth of it. */
  windowMs: number;
  /**
   * How near to an expiry or a window boundary a check looks, on each side of it. With 1 (the
   * default, for a clock that moves only when told) a check looks at the last millisecond before
   * and the first at the boundary, so an off-by-one in a backend fails. A clock that really waits
   * cannot place a call within a millisecond of a boundary, as each round trip and timer takes some
   * of it; it needs a margin longer than those, and then the checks are only as exact as that.
   */
  boundaryMarginMs: number;
}

export interface StateContractOptions {
  /**
   * A Redis server keeps its own time for TTLs, which an injected clock cannot move. Its backend
   * passes a clock whose `advance` really waits, with `timing` short enough to keep the waits small
   * and a margin long enough to outlast a round trip.
   */
  createClock?: () => StateTestClock;
  timing?: Partial<StateContractTiming>;
  /**
   * Opens a second handle on the backend the test's own handle uses (for Redis: another client with
   * the same key prefix), to check that handles see each other's writes and messages. Without it
   * those checks are skipped: every MemoryState is a backend of its own.
   */
  openSecondHandle?: (clock: StateTestClock) => Promise<SharedState>;
}

/** What the checks of each part of the contract use; `clock` and `state` are those of the running test. */
export interface ContractContext {
  readonly clock: StateTestClock;
  readonly state: SharedState;
  readonly timing: StateContractTiming;
  openSecondHandle: ((clock: StateTestClock) => Promise<SharedState>) | undefined;
  /** Moves to `offsetMs` into the next window of `timing.windowMs`, so a check knows where the boundaries are. */
  enterNextWindow(offsetMs?: number): Promise<number>;
}

function untyped<Type>(value: unknown): Type {
  return value as Type;
}

/** The behaviour every SharedState backend must have; each backend's test file calls this once. */
export function describeStateContract(
  name: string,
  open: (clock: StateTestClock) => Promise<SharedState>,
  { createClock = () => manualClock(), timing: timingOptions = {}, openSecondHandle }: StateContractOptions = {},
): void {
  const timing: StateContractTiming = { ttlMs: 1_000, windowMs: 1_000, boundaryMarginMs: 1, ...timingOptions };

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

    const context: ContractContext = {
      get clock() {
        return clock;
      },
      get state() {
        return state;
      },
      timing,
      openSecondHandle,
      async enterNextWindow(offsetMs = 0) {
        const windowStartMs = (Math.floor(clock.now() / timing.windowMs) + 1) * timing.windowMs;
        await clock.advance(windowStartMs + offsetMs - clock.now());
        return windowStartMs;
      },
    };
    describeValueChecks(context);
    describeWindowChecks(context);
    describeMapAndMessageChecks(context);
    describeMeterChecks(context);
    describeBudgetChecks(context);

    const { ttlMs: TTL_MS, windowMs: WINDOW_MS } = timing;

    it('rejects invalid arguments with a TypeError, changing nothing', async () => {
      for (const invalid of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
        await expect(state.set('key', 'value', invalid)).rejects.toThrow(TypeError);
        await expect(state.setIfAbsent('key', 'value', invalid)).rejects.toThrow(TypeError);
        await expect(state.compareAndSet('key', null, 'value', invalid)).rejects.toThrow(TypeError);
        await expect(state.addToWindow('team', 1, invalid)).rejects.toThrow(TypeError);
        await expect(state.setField('map', 'field', 'value', invalid)).rejects.toThrow(TypeError);
      }
      expect(await state.get('key')).toBeNull();
      await state.set('key', 'value', TTL_MS);
      await expect(state.touch('key', 0)).rejects.toThrow(TypeError);
      await expect(state.getAndTouch('key', 0)).rejects.toThrow(TypeError);
      for (const invalid of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
        await expect(state.addToWindow('team', invalid, WINDOW_MS)).rejects.toThrow(TypeError);
      }
      expect((await state.addToWindow('team', 0, WINDOW_MS)).current).toBe(0);
      // Values that reach here untyped, from parsed config or a header.
      await expect(state.setField('map', untyped<string>(7), 'value', TTL_MS)).rejects.toThrow(TypeError);
      await expect(state.setField('map', 'field', untyped<string>(undefined), TTL_MS)).rejects.toThrow(TypeError);
      expect(await state.readFields('map')).toEqual({});
      await expect(state.publish('events', untyped<string>(null))).rejects.toThrow(TypeError);
      await expect(state.subscribe('events', untyped<() => void>('not a function'))).rejects.toThrow(TypeError);
      expect(() => state.onAvailability(untyped<() => void>(null))).toThrow(TypeError);
      await clock.advance(TTL_MS);
      expect(await state.get('key')).toBeNull();
    });

    it('after close every operation rejects, and closing again is harmless', async () => {
      const other = await open(clock);
      const unsubscribe = await other.subscribe('events', () => {});
      await other.close();
      await expect(other.get('key')).rejects.toThrow();
      await expect(other.set('key', 'value', TTL_MS)).rejects.toThrow();
      await expect(other.getAndTouch('key', TTL_MS)).rejects.toThrow();
      await expect(other.addToWindow('team', 1, WINDOW_MS)).rejects.toThrow();
      await expect(other.setField('map', 'field', 'value', TTL_MS)).rejects.toThrow();
      await expect(other.readFields('map')).rejects.toThrow();
      await expect(other.publish('events', 'message')).rejects.toThrow();
      await expect(other.subscribe('events', () => {})).rejects.toThrow();
      // The one synchronous operation throws instead.
      expect(() => other.onAvailability(() => {})).toThrow();
      // Shutting down in any order must not fail: unsubscribing after close has nothing left to do.
      await expect(unsubscribe()).resolves.toBeUndefined();
      await expect(other.close()).resolves.toBeUndefined();
    });

    it('leaves no timer behind once closed', async () => {
      // Counts only timers that keep the process alive; MemoryState's own test checks its sweeper.
      const timeouts = (): number => process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;
      const before = timeouts();
      const other = await open(clock);
      await other.set('key', 'value', TTL_MS);
      await other.addToWindow('team', 1, WINDOW_MS);
      await other.setField('map', 'field', 'value', TTL_MS);
      await other.subscribe('events', () => {});
      await other.publish('events', 'message');
      await other.close();
      expect(timeouts()).toBeLessThanOrEqual(before);
    });
  });
}
