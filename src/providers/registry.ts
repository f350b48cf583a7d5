import type { ProviderKind } from '../config/index.js';
import { createAnthropicAdapter } from './anthropic/index.js';
import { createAzureAdapter } from './azure/index.js';
import { createCohereAdapter } from './cohere/index.js';
import { createGeminiAdapter } from './gemini/index.js';
import { createJinaAdapter } from './jina/index.js';
import { createLocalAdapter } from './local/index.js';
import { createOpenAIAdapter } from './openai/index.js';
import type { ProviderFactory } from './provider-adapter.js';
import { createTeiAdapter } from './tei/index.js';

/**
 * Every provider kind this build can serve. Only the composition root imports this file; core
 * code sees adapters through the ProviderAdapter interface alone.
 */
export const PROVIDER_FACTORIES: Partial<Record<ProviderKind, ProviderFactory>> = {
  openai: createOpenAIAdapter,
  anthropic: createAnthropicAdapter,
  azure: createAzureAdapter,
  cohere: createCohereAdapter,
  gemini: createGeminiAdapter,
  jina: createJinaAdapter,
  local: createLocalAdapter,
  tei: createTeiAdapter,
};
