import type { EndpointConfig, ModelType } from '../../config/index.js';
import type { Credential } from '../provider-adapter.js';
import { bearerHeaders } from '../shared/credential-headers.js';
import { DEFAULT_OPENAI_BASE_URL } from './openai-api.js';

export type OpenAIOperation = 'chat/completions' | 'responses' | 'embeddings' | 'rerank' | 'audio/speech' | 'audio/transcriptions';

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
  /** Whether `/v1/responses` is passed through to `{base_url}/responses`; without it, it is converted to chat. */
  responses?: boolean;
}

/**
 * OpenAI itself and everything that copies its URLs: vLLM, Ollama, llama.cpp, Groq, Together,
 * OpenRouter… The Responses API is passed through to all of them: OpenAI and most of these serve
 * `/responses` themselves, and a server that does not answers 404, which the caller sees as
 * `upstream_bad_request` (give such a server's models a route of their own, or a provider that
 * converts). See docs/responses-api.md.
 */
export function openAIEndpoints(endpoint: EndpointConfig): OpenAIEndpoints {
  return {
    baseUrl: endpoint.base_url ?? DEFAULT_OPENAI_BASE_URL,
    path: (operation) => `/${operation}`,
    headers: bearerHeaders,
    capabilities: new Set(['chat', 'embedding', 'rerank', 'speech', 'transcription']),
    responses: true,
  };
}
