import type { ProviderModule } from '../provider-adapter.js';
import { EMBEDDING_UPSTREAM_KEYS } from '../shared/upstream-keys.js';
import { createCohereAdapter } from './cohere-adapter.js';

export { createCohereAdapter } from './cohere-adapter.js';

export const cohereProvider: ProviderModule = { upstreamKeys: EMBEDDING_UPSTREAM_KEYS, create: createCohereAdapter };
