import type { ProviderModule } from '../provider-adapter.js';
import { createOpenAIAdapter } from './openai-adapter.js';
import { OPENAI_UPSTREAM_KEYS } from './openai-upstream-keys.js';

export { createOpenAIAdapter, OpenAIAdapter } from './openai-adapter.js';

export const openAIProvider: ProviderModule = { upstreamKeys: OPENAI_UPSTREAM_KEYS, create: createOpenAIAdapter };
