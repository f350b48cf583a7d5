import { resolve } from 'node:path';
import type { UpstreamConfig } from '../../config/index.js';
import { readUpstreamKeys } from '../shared/upstream-keys.js';
import { discoverGgufModels } from './chat/discover-gguf-models.js';
import { LOCAL_MODEL_IDS } from './local-model-ids.js';
import { LOCAL_UPSTREAM_KEYS } from './local-upstream-keys.js';

/**
 * The ids a `local` upstream publishes or lists as off (transcription without pocketsphinx), as
 * its adapter would, without starting it: what the CLI checks a token's allow-list against.
 */
export function localModelIds(upstream: UpstreamConfig): string[] {
  const keys = readUpstreamKeys(upstream, LOCAL_UPSTREAM_KEYS);
  if (keys.publish_models === false) return [];
  return [...discoverGgufModels(resolve(keys.models_dir ?? './models')).map((model) => model.id), ...Object.values(LOCAL_MODEL_IDS)];
}
