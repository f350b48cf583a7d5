import type { ProviderModule } from '../provider-adapter.js';
import { EMBEDDING_UPSTREAM_KEYS } from '../shared/upstream-keys.js';
import { createTeiAdapter } from './tei-adapter.js';

export { createTeiAdapter } from './tei-adapter.js';

export const teiProvider: ProviderModule = { upstreamKeys: EMBEDDING_UPSTREAM_KEYS, create: createTeiAdapter };
