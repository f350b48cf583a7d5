import { OpenAIAdapter } from '../openai/openai-adapter.js';
import type { ProviderFactory } from '../provider-adapter.js';
import { azureEndpoints } from './azure-endpoints.js';

/** Azure OpenAI is the OpenAI adapter with Azure's endpoints: the wire format is the same. */
export const createAzureAdapter: ProviderFactory = (endpoint) => new OpenAIAdapter(endpoint, azureEndpoints(endpoint));
