import type { ProviderFactory, ProviderModule } from '../provider-adapter.js';
import { LOCAL_UPSTREAM_KEYS } from './local-upstream-keys.js';
import { LocalAdapter } from './local-adapter.js';

export { LocalAdapter } from './local-adapter.js';
export { LOCAL_MODEL_IDS } from './local-model-ids.js';

export const createLocalAdapter: ProviderFactory = (endpoint) => new LocalAdapter(endpoint);

export const localProvider: ProviderModule = { upstreamKeys: LOCAL_UPSTREAM_KEYS, create: createLocalAdapter };
export { localModelIds } from './local-model-list.js';
