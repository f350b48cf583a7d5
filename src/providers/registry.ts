import type { ProviderKind } from '../config/index.js';
import { createAzureAdapter } from './azure/index.js';
import { createOpenAIAdapter } from './openai/index.js';
import type { ProviderFactory } from './provider-adapter.js';

/**
 * Every provider kind this build can serve. Only the composition root imports this file; core
 * code sees adapters through the ProviderAdapter interface alone.
 */
export const PROVIDER_FACTORIES: Partial<Record<ProviderKind, ProviderFactory>> = {
  openai: createOpenAIAdapter,
  azure: createAzureAdapter,
};
