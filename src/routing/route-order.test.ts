import { describe, expect, it } from 'vitest';
import type { ChatProvider } from '../providers/provider-adapter.js';
import type { CatalogModel, Route } from './model-catalog.js';
import { routeOrder } from './route-order.js';

const provider = {} as ChatProvider;

function model(weights: number[]): CatalogModel<'chat'> {
  const routes: Route<'chat'>[] = weights.map((weight, index) => ({ credential: { id: `u${index}`, apiKey: undefined, headers: {} }, upstreamModel: 'm', weight, provider }));
  return { id: 'm', type: 'chat', ownedBy: 'x', created: 0, routes, totalWeight: weights.reduce((sum, weight) => sum + weight, 0) };
}

/** A deterministic generator (mulberry32), so the split is checked without flakiness. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
}

describe('routeOrder', () => {
  it('returns the single route as is', () => {
    const single = model([1]);
    expect(routeOrder(single)).toBe(single.routes);
  });

  it('tries every route exactly once', () => {
    const random = seeded(1);
    for (let draw = 0; draw < 100; draw++) {
      const order = routeOrder(model([1, 2, 3, 4]), random).map((route) => route.credential.id);
      expect([...order].sort()).toEqual(['u0', 'u1', 'u2', 'u3']);
    }
  });

  it('puts each route first in proportion to its weight', () => {
    const random = seeded(42);
    const pool = model([1, 3]);
    const first = { u0: 0, u1: 0 } as Record<string, number>;
    const draws = 20_000;
    for (let draw = 0; draw < draws; draw++) first[(routeOrder(pool, random)[0] as Route).credential.id]! += 1;
    expect((first['u1'] as number) / draws).toBeGreaterThan(0.73);
    expect((first['u1'] as number) / draws).toBeLessThan(0.77);
  });
});
