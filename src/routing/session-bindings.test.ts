import { describe, expect, it } from 'vitest';
import { MemoryState } from '../state/index.js';
import { BINDING_FRESH_MS, MAX_FRESH_BINDINGS, SessionBindings, type BindingStore } from './session-bindings.js';

const HOUR_MS = 3_600_000;

/** The state, counting the reads that reach it. */
function counted(state: MemoryState): { store: BindingStore; reads: () => number } {
  let reads = 0;
  return {
    store: {
      getAndTouch: (key, ttlMs) => {
        reads++;
        return state.getAndTouch(key, ttlMs);
      },
      setIfAbsent: (key, value, ttlMs, cap) => state.setIfAbsent(key, value, ttlMs, cap),
      compareAndSet: (key, expected, value, ttlMs) => state.compareAndSet(key, expected, value, ttlMs),
    },
    reads: () => reads,
  };
}

describe('SessionBindings: a binding read is trusted for a while', () => {
  const key = SessionBindings.key({ team: 'search', model: 'gpt-4o-mini', id: 'conversation-1', source: 'header' });
  const fail = (error: unknown) => {
    throw error;
  };

  it("reads the state once a second per session; this process's moves are seen at once, another's within the second", async () => {
    const state = new MemoryState();
    const clock = { now: 1_000_000 };
    const { store, reads } = counted(state);
    const bindings = new SessionBindings(store, HOUR_MS, fail, 100, () => clock.now);
    const other = new SessionBindings(state, HOUR_MS, fail, 100, () => clock.now);
    // Unbound: read every time (the request binds it, and the next one must see that).
    expect(await bindings.lookup(key)).toBeNull();
    await bindings.bind(key, 'openai-a', 'search');
    expect(await bindings.lookup(key)).toBe('openai-a');
    expect(reads()).toBe(2);
    for (let request = 0; request < 10; request++) expect(await bindings.lookup(key)).toBe('openai-a');
    expect(reads()).toBe(2);
    await bindings.move(key, 'openai-a', 'openai-b');
    expect(await bindings.lookup(key)).toBe('openai-b');
    expect(reads()).toBe(2);
    // Another process moves it: trusted as read until the second has passed.
    await other.move(key, 'openai-b', 'openai-c');
    clock.now += BINDING_FRESH_MS - 1;
    expect(await bindings.lookup(key)).toBe('openai-b');
    clock.now += 1;
    expect(await bindings.lookup(key)).toBe('openai-c');
    expect(reads()).toBe(3);
    await state.close();
  });

  it(`trusts at most ${MAX_FRESH_BINDINGS} bindings, the most recently read`, async () => {
    const state = new MemoryState();
    const { store, reads } = counted(state);
    const bindings = new SessionBindings(store, HOUR_MS, fail, Number.MAX_SAFE_INTEGER, () => 0);
    const keyOf = (index: number) => SessionBindings.key({ team: 'search', model: 'gpt-4o-mini', id: `conversation-${index}`, source: 'header' });
    for (let index = 0; index <= MAX_FRESH_BINDINGS; index++) await state.setIfAbsent(keyOf(index), 'openai-a', HOUR_MS);
    for (let index = 0; index <= MAX_FRESH_BINDINGS; index++) await bindings.lookup(keyOf(index));
    expect(reads()).toBe(MAX_FRESH_BINDINGS + 1);
    // The last read is trusted; the first was forgotten to make room for it.
    await bindings.lookup(keyOf(MAX_FRESH_BINDINGS));
    expect(reads()).toBe(MAX_FRESH_BINDINGS + 1);
    await bindings.lookup(keyOf(0));
    expect(reads()).toBe(MAX_FRESH_BINDINGS + 2);
    await state.close();
  });
});
