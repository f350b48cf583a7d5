import { describe, expect, it } from 'vitest';
import { costOf } from './model-prices.js';

const PRICE = { input_per_mtok: 3, output_per_mtok: 15, cached_input_per_mtok: 0.3, cache_write_per_mtok: 3.75 };

describe('costOf', () => {
  it('prices cache reads and cache writes apart from the other prompt tokens', () => {
    // 1,000 prompt tokens: 600 read from the cache, 300 written to it, 100 neither; 200 completion tokens.
    const cost = costOf(PRICE, { promptTokens: 1_000, completionTokens: 200, totalTokens: 1_200, cachedTokens: 600, cacheWriteTokens: 300 });
    expect(cost).toBeCloseTo((100 * 3 + 600 * 0.3 + 300 * 3.75 + 200 * 15) / 1_000_000, 12);
  });

  it('prices cache writes at the input price when the model names no cache-write price', () => {
    const cost = costOf({ input_per_mtok: 3, output_per_mtok: 15 }, { promptTokens: 1_000, completionTokens: 0, totalTokens: 1_000, cacheWriteTokens: 400 });
    expect(cost).toBeCloseTo((1_000 * 3) / 1_000_000, 12);
  });

  it('is null without a price', () => {
    expect(costOf(undefined, { promptTokens: 1, completionTokens: 1, totalTokens: 2 })).toBeNull();
  });
});
