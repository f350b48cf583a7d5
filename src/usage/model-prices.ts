import type { Usage } from '../core/index.js';

export interface ModelPrice {
  input_per_mtok: number;
  output_per_mtok: number;
  cached_input_per_mtok?: number;
  cache_write_per_mtok?: number;
}

/**
 * What a request cost in US dollars by its model's configured price: prompt tokens read from the
 * cache at the cached price, those written to it at the cache-write price (each the input price
 * when none is given), the others at the input price, completion tokens at the output price. Null
 * when the model has no price.
 */
export function costOf(price: ModelPrice | undefined, usage: Usage): number | null {
  if (price === undefined) return null;
  const cached = Math.min(usage.cachedTokens ?? 0, usage.promptTokens);
  const written = Math.min(usage.cacheWriteTokens ?? 0, usage.promptTokens - cached);
  const dollars =
    (usage.promptTokens - cached - written) * price.input_per_mtok +
    cached * (price.cached_input_per_mtok ?? price.input_per_mtok) +
    written * (price.cache_write_per_mtok ?? price.input_per_mtok) +
    usage.completionTokens * price.output_per_mtok;
  return dollars / 1_000_000;
}
