import type { ProviderModule } from '../provider-adapter.js';
import { EMBEDDING_UPSTREAM_KEYS } from '../shared/upstream-keys.js';
import { createOpenAIAdapter } from './openai-adapter.js';

export { createOpenAIAdapter, OpenAIAdapter } from './openai-adapter.js';

export const openAIProvider: ProviderModule = { upstreamKeys: EMBEDDING_UPSTREAM_KEYS, create: createOpenAIAdapter };
