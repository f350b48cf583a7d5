import { expect, it } from 'vitest';
import type { ContractContext } from './state-contract.js';

/** The contract for values: get, set, delete, setIfAbsent, compareAndSet, touch, getAndTouch. */
export function describeValueChecks(context: ContractContext): void {
  // The checks that look either side of a boundary step MARGIN_MS across it: exactly 1 ms with a
  // clock that moves only when told, a margin that outlasts a round trip with one that really waits.
  const { ttlMs: TTL_MS, boundaryMarginMs: MARGIN_MS } = context.timing;

  it('reads back what it set, and null for what it never had', async () => {
    const { state } = context;
    await state.set('session:1', 'credential-a', TTL_MS);
    expect(await state.get('session:1')).toBe('credential-a');
    expect(await state.get('session:2')).toBeNull();
    await state.set('empty', '', TTL_MS);
    expect(await state.get('empty')).toBe('');
  });

  it('replaces both the value and its TTL on set', async () => {
    const { state, clock } = context;
    await state.set('key', 'first', TTL_MS);
    await clock.advance(TTL_MS / 2);
    await state.set('key', 'second', 2 * TTL_MS);
    await clock.advance(TTL_MS);
    expect(await state.get('key')).toBe('second');
  });

  it('deletes, saying whether something live was there', async () => {
    const { state, clock } = context;
    await state.set('key', 'value', TTL_MS);
    expect(await state.delete('key')).toBe(true);
    expect(await state.get('key')).toBeNull();
    expect(await state.delete('key')).toBe(false);
    await state.set('expiring', 'value', TTL_MS);
    await clock.advance(TTL_MS);
    expect(await state.delete('expiring')).toBe(false);
  });

  it('expires a value at its TTL (exactly, with a margin of 1), and it stays gone', async () => {
    const { state, clock } = context;
    await state.set('key', 'value', TTL_MS);
    await clock.advance(TTL_MS - MARGIN_MS);
    expect(await state.get('key')).toBe('value');
    await clock.advance(MARGIN_MS);
    expect(await state.get('key')).toBeNull();
    await clock.advance(10 * TTL_MS);
    expect(await state.get('key')).toBeNull();
  });

  it('touch makes a live value expire ttlMs from now, which may also shorten it', async () => {
    const { state, clock } = context;
    await state.set('key', 'value', TTL_MS);
    // A margin before the end, not a tenth: on Redis the clock is real, and a loaded machine took
    // more than the 8 ms a tenth left between the wait and the touch. Two such waits still pass the
    // first expiry, so a touch that did not slide it fails below.
    await clock.advance(TTL_MS - MARGIN_MS);
    expect(await state.touch('key', TTL_MS)).toBe(true);
    await clock.advance(TTL_MS - MARGIN_MS);
    expect(await state.get('key')).toBe('value');
    await clock.advance(MARGIN_MS);
    expect(await state.get('key')).toBeNull();
    expect(await state.touch('key', TTL_MS)).toBe(false);
    expect(await state.get('key')).toBeNull();
    expect(await state.touch('never-set', TTL_MS)).toBe(false);

    await state.set('long', 'value', 100 * TTL_MS);
    expect(await state.touch('long', TTL_MS)).toBe(true);
    await clock.advance(TTL_MS);
    expect(await state.get('long')).toBeNull();
  });

  it('getAndTouch returns a live value and slides its expiry to ttlMs from now', async () => {
    const { state, clock } = context;
    await state.set('session:1', 'credential-a', TTL_MS);
    await clock.advance(TTL_MS - TTL_MS / 10);
    expect(await state.getAndTouch('session:1', TTL_MS)).toBe('credential-a');
    await clock.advance(TTL_MS - MARGIN_MS);
    expect(await state.get('session:1')).toBe('credential-a');
    await clock.advance(MARGIN_MS);
    expect(await state.get('session:1')).toBeNull();
    expect(await state.getAndTouch('session:1', TTL_MS)).toBeNull();

    await state.set('long', 'value', 100 * TTL_MS);
    expect(await state.getAndTouch('long', TTL_MS)).toBe('value');
    await clock.advance(TTL_MS);
    expect(await state.get('long')).toBeNull();
  });

  it('getAndTouch of a key never set is null, and creates nothing', async () => {
    const { state } = context;
    expect(await state.getAndTouch('never-set', TTL_MS)).toBeNull();
    expect(await state.get('never-set')).toBeNull();
    expect(await state.setIfAbsent('never-set', 'first', TTL_MS)).toBe('first');
  });

  it('setIfAbsent keeps a live value and its TTL, and replaces an expired one', async () => {
    const { state, clock } = context;
    expect(await state.setIfAbsent('key', 'first', TTL_MS)).toBe('first');
    await clock.advance(TTL_MS / 2);
    expect(await state.setIfAbsent('key', 'second', 100 * TTL_MS)).toBe('first');
    await clock.advance(TTL_MS / 2);
    expect(await state.get('key')).toBeNull();
    expect(await state.setIfAbsent('key', 'third', TTL_MS)).toBe('third');
    expect(await state.get('key')).toBe('third');
  });

  it('of 50 racing setIfAbsent calls exactly one wins, and all are told its value', async () => {
    const { state } = context;
    const candidates = Array.from({ length: 50 }, (_, index) => `credential-${index}`);
    const results = await Promise.all(candidates.map((value) => state.setIfAbsent('session:race', value, TTL_MS)));
    const winner = results[0];
    expect(candidates).toContain(winner);
    expect(new Set(results)).toEqual(new Set([winner]));
    expect(await state.get('session:race')).toBe(winner);
  });

  it('setIfAbsent with a cap keeps at most its limit of keys per index, the earliest added going first with their values', async () => {
    const { state, clock } = context;
    const cap = { index: 'team-a', limit: 3 };
    for (const id of [1, 2, 3, 4, 5]) {
      expect(await state.setIfAbsent(`capped:${id}`, `credential-${id}`, TTL_MS, cap)).toBe(`credential-${id}`);
      // Distinct times, so that "earliest" is not a tie on any backend's clock.
      await clock.advance(2);
    }
    expect(await Promise.all([1, 2, 3, 4, 5].map((id) => state.get(`capped:${id}`)))).toEqual([null, null, 'credential-3', 'credential-4', 'credential-5']);
    // A key already set is not added again, and another index has its own limit.
    expect(await state.setIfAbsent('capped:5', 'other', TTL_MS, cap)).toBe('credential-5');
    expect(await state.setIfAbsent('capped:b1', 'credential-b', TTL_MS, { index: 'team-b', limit: 3 })).toBe('credential-b');
    expect(await state.get('capped:3')).toBe('credential-3');
    await expect(state.setIfAbsent('capped:x', 'v', TTL_MS, { index: 'team-a', limit: 0 })).rejects.toThrow(TypeError);
  });

  it('a cap holds across handles: of 200 keys two handles race to set under a limit of 50, exactly 50 live', async () => {
    const { state, clock, openSecondHandle } = context;
    const other = openSecondHandle === undefined ? state : await openSecondHandle(clock);
    try {
      const cap = { index: 'team-race', limit: 50 };
      const keys = Array.from({ length: 200 }, (_, index) => `raced:${index}`);
      // A long TTL: what is checked is the cap, not expiry, however long 200 round trips take.
      await Promise.all(keys.map((key, index) => (index % 2 === 0 ? state : other).setIfAbsent(key, 'credential', 100 * TTL_MS, cap)));
      const live = (await Promise.all(keys.map((key) => state.get(key)))).filter((value) => value !== null);
      expect(live).toHaveLength(50);
    } finally {
      if (other !== state) await other.close();
    }
  });

  it('compareAndSet replaces only the expected value, an expired one counting as absent', async () => {
    const { state, clock } = context;
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
    // The empty string is a value, not absence.
    await state.set('empty', '', TTL_MS);
    expect(await state.compareAndSet('empty', null, 'x', TTL_MS)).toBe(false);
    expect(await state.compareAndSet('empty', '', 'x', TTL_MS)).toBe(true);
  });

  it('of racing compareAndSet calls from the same value, exactly one succeeds', async () => {
    const { state } = context;
    await state.set('session:failover', 'credential-a', TTL_MS);
    const candidates = Array.from({ length: 20 }, (_, index) => `credential-${index}`);
    const results = await Promise.all(candidates.map((value) => state.compareAndSet('session:failover', 'credential-a', value, TTL_MS)));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await state.get('session:failover')).toBe(candidates[results.indexOf(true)]);
  });
}
