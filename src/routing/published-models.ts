import type { ModelConfig, UpstreamConfig } from '../config/index.js';
import type { ProviderAdapter } from '../providers/provider-adapter.js';

/**
 * The configured models plus those upstreams publish by themselves (the built-in `local`
 * provider). A configured model wins over a published one of the same id; a model published by
 * several upstreams becomes one model with a route to each, like any pool.
 */
export function withPublishedModels(
  models: readonly ModelConfig[],
  upstreams: readonly UpstreamConfig[],
  adapters: ReadonlyMap<string, ProviderAdapter>,
): ModelConfig[] {
  const configured = new Set(models.map((model) => model.id));
  const published = new Map<string, ModelConfig>();
  for (const upstream of upstreams) {
    for (const offered of adapters.get(upstream.id)?.publishedModels?.() ?? []) {
      if (configured.has(offered.id)) continue;
      const route = { upstream: upstream.id, model: offered.id, weight: 1 };
      const existing = published.get(offered.id);
      if (existing === undefined) published.set(offered.id, { id: offered.id, type: offered.type, routes: [route] });
      else if (existing.type === offered.type) existing.routes.push(route);
    }
  }
  return [...models, ...published.values()];
}
