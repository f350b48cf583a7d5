import type { CommonConfig } from '../config/index.js';
import { localModelIds } from '../providers/local/index.js';

/**
 * The model ids a running gateway on this config would serve (configured ones and those `local`
 * upstreams publish), without starting one: what `tokens create/update --models` may name.
 */
export function knownModelIds(config: CommonConfig): string[] {
  return [
    ...config.models.map((model) => model.id),
    ...config.upstreams.flatMap((upstream) => (upstream.local === undefined ? [] : localModelIds(upstream.local))),
  ];
}
