import type { ProviderFactory } from '../provider-adapter.js';
import { LocalAdapter } from './local-adapter.js';

export { LocalAdapter } from './local-adapter.js';
export { LOCAL_MODEL_IDS } from './local-model-ids.js';

export const createLocalAdapter: ProviderFactory = (upstream) => new LocalAdapter(upstream);
