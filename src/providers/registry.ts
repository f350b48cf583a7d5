import type { ProviderKind } from '../config/index.js';
import type { ProviderFactory } from './provider-adapter.js';

/**
 * Every provider kind this build can serve, each loaded only when a config names it: a gateway
 * in front of OpenAI alone never loads the Gemini converters or the local engines. Only the
 * composition root imports this file; core code sees adapters through ProviderAdapter alone.
 */
export const PROVIDER_LOADERS: Partial<Record<ProviderKind, () => Promise<ProviderFactory>>> = {
  openai: async () => (await import('./openai/index.js')).createOpenAIAdapter,
  anthropic: async () => (await import('./anthropic/index.js')).createAnthropicAdapter,
  azure: async () => (await import('./azure/index.js')).createAzureAdapter,
  cohere: async () => (await import('./cohere/index.js')).createCohereAdapter,
  gemini: async () => (await import('./gemini/index.js')).createGeminiAdapter,
  jina: async () => (await import('./jina/index.js')).createJinaAdapter,
  local: async () => (await import('./local/index.js')).createLocalAdapter,
  tei: async () => (await import('./tei/index.js')).createTeiAdapter,
};
