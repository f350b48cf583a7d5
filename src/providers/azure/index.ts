import type { ProviderModule } from '../provider-adapter.js';
import { AZURE_UPSTREAM_KEYS } from './azure-upstream-keys.js';
import { createAzureAdapter } from './azure-adapter.js';

export { createAzureAdapter } from './azure-adapter.js';
export { DEFAULT_AZURE_API_VERSION } from './azure-endpoints.js';

export const azureProvider: ProviderModule = { upstreamKeys: AZURE_UPSTREAM_KEYS, create: createAzureAdapter };
