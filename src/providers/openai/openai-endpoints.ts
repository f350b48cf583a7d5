import type { EndpointConfig, ModelType } from '../../config/index.js';
import type { Credential } from '../provider-adapter.js';
import { bearerHeaders } from '../shared/credential-headers.js';
import { readUpstreamKeys } from '../shared/upstream-keys.js';
import { DEFAULT_OPENAI_BASE_URL } from './openai-api.js';
import { OPENAI_UPSTREAM_KEYS, type ResponsesMode } from './openai-upstream-keys.js';

export type OpenAIOperation = 'chat/completions' | 'responses' | 'embeddings' | 'rerank' | 'audio/speech' | 'audio/transcriptions' | 'audio/translations';

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
  /**
   * How `/v1/responses` reaches it: passed through to `{base_url}/responses`, converted to chat,
   * or passed through until the server shows it has no Responses API (`auto`). Without it, converted.
   */
  responses?: ResponsesMode;
}

/**
 * OpenAI itself and everything that copies its URLs: vLLM, Ollama, llama.cpp, Groq, Together,
 * OpenRouter… The Responses API is passed through to OpenAI; any other server gets `auto` unless
 * its entry says `responses:`: most serve `/responses` themselves, and one that answers 404 or 405
 * there is converted to chat from then on. See docs/responses-api.md.
 */
export function openAIEndpoints(endpoint: EndpointConfig): OpenAIEndpoints {
  const baseUrl = endpoint.base_url ?? DEFAULT_OPENAI_BASE_URL;
  return {
    baseUrl,
    path: (operation) => `/${operation}`,
    headers: bearerHeaders,
    capabilities: new Set(['chat', 'embedding', 'rerank', 'speech', 'transcription']),
    responses: readUpstreamKeys(endpoint, OPENAI_UPSTREAM_KEYS).responses ?? (isOpenAIItself(baseUrl) ? 'passthrough' : 'auto'),
  };
}

/** OpenAI's own API serves `/responses` for every model it has: nothing to detect there. */
function isOpenAIItself(baseUrl: string): boolean {
  try {
    return new URL(baseUrl).hostname === new URL(DEFAULT_OPENAI_BASE_URL).hostname;
  } catch {
    return false;
  }
}
