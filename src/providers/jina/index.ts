import type { ProviderModule } from '../provider-adapter.js';
import { EMBEDDING_UPSTREAM_KEYS } from '../shared/upstream-keys.js';
import { createJinaAdapter } from './jina-adapter.js';

export { createJinaAdapter } from './jina-adapter.js';

export const jinaProvider: ProviderModule = { upstreamKeys: EMBEDDING_UPSTREAM_KEYS, create: createJinaAdapter };
