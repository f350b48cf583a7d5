import type { ModelConfig } from '../config/index.js';
import type { CredentialEntry } from './model-catalog.js';

/**
 * The configured models plus those upstreams publish by themselves (the built-in `local`
 * provider). A configured model wins over a published one of the same id; a model published by
 * several credentials becomes one model with a route to each, like any pool.
 */
export function withPublishedModels(models: readonly ModelConfig[], credentials: ReadonlyMap<string, CredentialEntry>): ModelConfig[] {
  const configured = new Set(models.map((model) => model.id));
  const published = new Map<string, ModelConfig>();
  for (const [credentialId, { adapter }] of credentials) {
    for (const offered of adapter.publishedModels?.() ?? []) {
      if (configured.has(offered.id)) continue;
      const route = { upstream: credentialId, model: offered.id, weight: 1, priority: 0 };
      const existing = published.get(offered.id);
      if (existing === undefined) published.set(offered.id, { id: offered.id, type: offered.type, strategy: 'weighted', routes: [route] });
      else if (existing.type === offered.type) existing.routes.push(route);
    }
  }
  return [...models, ...published.values()];
}
