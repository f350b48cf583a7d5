import type { ModelType, UpstreamConfig } from '../../config/index.js';
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
  /** Authentication and extra headers sent with every request. */
  headers: Record<string, string>;
  capabilities: ReadonlySet<ModelType>;
}

/** OpenAI itself and everything that copies its URLs: vLLM, Ollama, llama.cpp, Groq, Together, OpenRouter… */
export function openAIEndpoints(upstream: UpstreamConfig): OpenAIEndpoints {
  return {
    baseUrl: upstream.base_url ?? DEFAULT_OPENAI_BASE_URL,
    path: (operation) => `/${operation}`,
    headers: { ...(upstream.api_key ? { authorization: `Bearer ${upstream.api_key}` } : {}), ...upstream.headers },
    capabilities: new Set(['chat', 'embedding', 'rerank', 'speech', 'transcription']),
  };
}
