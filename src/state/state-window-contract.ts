import { expect, it } from 'vitest';
import { slidingWindowEstimate } from './shared-state.js';
import type { ContractContext } from './state-contract.js';

/** The contract for window counters: addToWindow. */
export function describeWindowChecks(context: ContractContext): void {
  // The checks that look either side of a boundary step MARGIN_MS across it: exactly 1 ms with a
  // clock that moves only when told, a margin that outlasts a round trip with one that really waits.
  const { ttlMs: TTL_MS, windowMs: WINDOW_MS, boundaryMarginMs: MARGIN_MS } = context.timing;

  it('counts in windows aligned to multiples of windowMs since the epoch', async () => {
    const { state } = context;
    const windowStartMs = await context.enterNextWindow(WINDOW_MS / 10);
    expect(windowStartMs % WINDOW_MS).toBe(0);
    expect(await state.addToWindow('team:search', 3, WINDOW_MS)).toEqual({ current: 3, previous: 0, windowStartMs, windowMs: WINDOW_MS });
    expect((await state.addToWindow('team:search', 4, WINDOW_MS)).current).toBe(7);
    expect((await state.addToWindow('team:search', 0, WINDOW_MS)).current).toBe(7);
    expect((await state.addToWindow('team:search', -2, WINDOW_MS)).current).toBe(5);
    expect((await state.addToWindow('team:search', 0.5, WINDOW_MS)).current).toBe(5.5);
    // Fractions are kept exactly, not rounded to some number of digits on the way.
    await state.addToWindow('team:fractions', 0.1, WINDOW_MS);
    expect((await state.addToWindow('team:fractions', 0.2, WINDOW_MS)).current).toBe(0.1 + 0.2);
  });

  it('rolls the window over at its boundary (exactly, with a margin of 1), and forgets it two windows on', async () => {
    const { state, clock } = context;
    const windowStartMs = await context.enterNextWindow();
    await state.addToWindow('team:search', 7, WINDOW_MS);
    await clock.advance(WINDOW_MS - MARGIN_MS);
    expect(await state.addToWindow('team:search', 0, WINDOW_MS)).toMatchObject({ current: 7, previous: 0, windowStartMs });
    await clock.advance(MARGIN_MS);
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
    const { state, clock } = context;
    await context.enterNextWindow(WINDOW_MS / 2);
    await state.addToWindow('team:search', 5, WINDOW_MS);
    await clock.advance(2 * WINDOW_MS);
    expect(await state.addToWindow('team:search', 1, WINDOW_MS)).toMatchObject({ current: 1, previous: 0 });
  });

  it('a read of a counter never counted in is zero, and counts nothing', async () => {
    const { state } = context;
    const windowStartMs = await context.enterNextWindow(WINDOW_MS / 100);
    expect(await state.addToWindow('team:none', 0, WINDOW_MS)).toEqual({ current: 0, previous: 0, windowStartMs, windowMs: WINDOW_MS });
    expect((await state.addToWindow('team:none', 1, WINDOW_MS)).current).toBe(1);
  });

  it('keeps values, and counters of different window lengths, apart under the same key', async () => {
    const { state } = context;
    await context.enterNextWindow();
    await state.addToWindow('team:search', 1, WINDOW_MS);
    await state.addToWindow('team:search', 10, 60 * WINDOW_MS);
    expect(await state.get('team:search')).toBeNull();
    await state.set('team:search', 'value', TTL_MS);
    expect((await state.addToWindow('team:search', 0, WINDOW_MS)).current).toBe(1);
    expect((await state.addToWindow('team:search', 0, 60 * WINDOW_MS)).current).toBe(10);
    expect(await state.get('team:search')).toBe('value');
  });

  it('sums concurrent increments exactly, each call seeing a distinct total', async () => {
    const { state } = context;
    await context.enterNextWindow(1);
    const results = await Promise.all(Array.from({ length: 100 }, () => state.addToWindow('team:busy', 1, WINDOW_MS)));
    expect(results.map((result) => result.current).sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, index) => index + 1));
    expect((await state.addToWindow('team:busy', 0, WINDOW_MS)).current).toBe(100);
  });

  it('gives what slidingWindowEstimate needs', async () => {
    const { state, clock } = context;
    const windowStartMs = await context.enterNextWindow();
    await state.addToWindow('team:search', 10, WINDOW_MS);
    await clock.advance(WINDOW_MS + WINDOW_MS / 4);
    const count = await state.addToWindow('team:search', 4, WINDOW_MS);
    expect(count).toEqual({ current: 4, previous: 10, windowStartMs: windowStartMs + WINDOW_MS, windowMs: WINDOW_MS });
    // At the time the count was taken (a real clock has moved on a little since).
    expect(slidingWindowEstimate(count, windowStartMs + WINDOW_MS + WINDOW_MS / 4)).toBe(10 * 0.75 + 4);
  });
}
