import type { ProviderKind } from '../config/index.js';
import type { ProviderModule } from './provider-adapter.js';

/**
 * Every provider kind this build can serve, each loaded only when a config names it: a gateway
 * in front of OpenAI alone never loads the Gemini converters or the local engines. Only the
 * composition root imports this file; core code sees adapters through ProviderAdapter alone.
 */
export const PROVIDER_LOADERS: Partial<Record<ProviderKind, () => Promise<ProviderModule>>> = {
  openai: async () => (await import('./openai/index.js')).openAIProvider,
  anthropic: async () => (await import('./anthropic/index.js')).anthropicProvider,
  azure: async () => (await import('./azure/index.js')).azureProvider,
  codex: async () => (await import('./codex/index.js')).codexProvider,
  cohere: async () => (await import('./cohere/index.js')).cohereProvider,
  gemini: async () => (await import('./gemini/index.js')).geminiProvider,
  jina: async () => (await import('./jina/index.js')).jinaProvider,
  local: async () => (await import('./local/index.js')).localProvider,
  tei: async () => (await import('./tei/index.js')).teiProvider,
};
