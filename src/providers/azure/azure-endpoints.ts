import type { EndpointConfig } from '../../config/index.js';
import type { OpenAIEndpoints } from '../openai/openai-endpoints.js';
import { readUpstreamKeys } from '../shared/upstream-keys.js';
import { AZURE_UPSTREAM_KEYS } from './azure-upstream-keys.js';

/** The generally available Azure OpenAI data-plane version used when the config names none. */
export const DEFAULT_AZURE_API_VERSION = '2024-10-21';

/**
 * Azure OpenAI: the same wire format as OpenAI under deployment URLs,
 * `{base_url}/openai/deployments/{deployment}/{operation}?api-version=…`, with the key in an
 * `api-key` header. A route's `model` is the deployment name. Azure has no rerank.
 */
export function azureEndpoints(endpoint: EndpointConfig): OpenAIEndpoints {
  // Checked with the rest of the config (check-references); kept here for callers that skip it.
  if (endpoint.base_url === undefined) throw new Error(`${endpoint.name}: azure needs base_url`);
  const version = encodeURIComponent(readUpstreamKeys(endpoint, AZURE_UPSTREAM_KEYS).api_version ?? DEFAULT_AZURE_API_VERSION);
  return {
    baseUrl: endpoint.base_url,
    path: (operation, deployment) => `/openai/deployments/${encodeURIComponent(deployment)}/${operation}?api-version=${version}`,
    headers: (credential) => ({ 'content-type': 'application/json', ...(credential.apiKey ? { 'api-key': credential.apiKey } : {}), ...credential.headers }),
    capabilities: new Set(['chat', 'embedding', 'speech', 'transcription']),
  };
}
