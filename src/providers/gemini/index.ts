import type { ProviderModule } from '../provider-adapter.js';
import { EMBEDDING_UPSTREAM_KEYS } from '../shared/upstream-keys.js';
import { createGeminiAdapter } from './gemini-adapter.js';

export { createGeminiAdapter, GeminiAdapter } from './gemini-adapter.js';

export const geminiProvider: ProviderModule = { upstreamKeys: EMBEDDING_UPSTREAM_KEYS, create: createGeminiAdapter };
