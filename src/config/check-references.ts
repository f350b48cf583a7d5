import { ConfigError } from './config-error.js';
import type { SwitchyardConfig } from './config-schema.js';

/** What the schema cannot say: ids are unique and every route names an upstream that exists. */
export function checkReferences(config: SwitchyardConfig): void {
  const upstreamIds = new Set<string>();
  config.upstreams.forEach((upstream, index) => {
    if (upstreamIds.has(upstream.id)) throw new ConfigError(`upstreams[${index}].id`, `duplicate upstream id "${upstream.id}"`);
    upstreamIds.add(upstream.id);
    if (upstream.provider === 'azure' && upstream.base_url === undefined) {
      throw new ConfigError(`upstreams[${index}].base_url`, 'is required for azure: the resource endpoint, e.g. https://my-resource.openai.azure.com');
    }
  });
  const modelIds = new Map<string, string>();
  config.models.forEach((model, modelIndex) => {
    if (modelIds.has(model.id)) throw new ConfigError(`models[${modelIndex}].id`, `duplicate model id "${model.id}"`);
    modelIds.set(model.id, model.type);
    model.routes.forEach((route, routeIndex) => {
      if (!upstreamIds.has(route.upstream)) {
        throw new ConfigError(`models[${modelIndex}].routes[${routeIndex}].upstream`, `unknown upstream "${route.upstream}"`);
      }
    });
  });
  const transcriptionDefault = config.defaults.transcription_model;
  if (transcriptionDefault !== undefined && modelIds.get(transcriptionDefault) !== 'transcription') {
    throw new ConfigError('defaults.transcription_model', `"${transcriptionDefault}" is not a configured transcription model`);
  }
}
