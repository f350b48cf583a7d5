import type { EndpointConfig, ModelType } from '../../config/index.js';
import type { Credential } from '../provider-adapter.js';
import { bearerHeaders } from '../shared/credential-headers.js';
import { DEFAULT_OPENAI_BASE_URL } from './openai-api.js';

export type OpenAIOperation = 'chat/completions' | 'embeddings' | 'rerank' | 'audio/speech' | 'audio/transcriptions';

/**
 * Where an OpenAI-shaped API puts each operation and how it authenticates. OpenAI-compatible
 * vendors differ in these alone, so they are configuration of one adapter, not copies of it.
 */
export interface OpenAIEndpoints {
  baseUrl: string;
  /** The path (and query) of an operation, under the base URL's path. */
  path(operation: OpenAIOperation, model: string): string;
  /** The headers a credential's requests carry: its key where this API wants it, and its extra headers. */
  headers(credential: Credential): Record<string, string>;
  capabilities: ReadonlySet<ModelType>;
}

/** OpenAI itself and everything that copies its URLs: vLLM, Ollama, llama.cpp, Groq, Together, OpenRouter… */
export function openAIEndpoints(endpoint: EndpointConfig): OpenAIEndpoints {
  return {
    baseUrl: endpoint.base_url ?? DEFAULT_OPENAI_BASE_URL,
    path: (operation) => `/${operation}`,
    headers: bearerHeaders,
    capabilities: new Set(['chat', 'embedding', 'rerank', 'speech', 'transcription']),
  };
}
