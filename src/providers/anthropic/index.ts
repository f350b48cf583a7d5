import type { ProviderModule } from '../provider-adapter.js';
import { createAnthropicAdapter } from './anthropic-adapter.js';

export { AnthropicAdapter, createAnthropicAdapter } from './anthropic-adapter.js';

export const anthropicProvider: ProviderModule = { upstreamKeys: {}, create: createAnthropicAdapter };
