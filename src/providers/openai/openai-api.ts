/** The parts of OpenAI's chat completions wire format the gateway reads. Everything else passes through. */

export interface OpenAIUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
}

export interface OpenAIToolCallDelta {
  function?: { name?: string | null; arguments?: string | null } | null;
}

export interface OpenAIChatCompletion {
  choices?: Array<{
    message?: { content?: string | null; refusal?: string | null; tool_calls?: OpenAIToolCallDelta[] | null } | null;
  }> | null;
  usage?: OpenAIUsage | null;
}

export interface OpenAIChatCompletionChunk {
  choices?: Array<{
    delta?: { content?: string | null; refusal?: string | null; tool_calls?: OpenAIToolCallDelta[] | null } | null;
  }> | null;
  usage?: OpenAIUsage | null;
  error?: OpenAIErrorObject | null;
}

export interface OpenAIErrorObject {
  message?: string;
  type?: string;
  code?: string | number | null;
  param?: string | null;
}

export interface OpenAIErrorBody {
  error?: OpenAIErrorObject | string;
  message?: string;
}

export interface OpenAIEmbeddingResponse {
  data?: Array<{ index?: number; embedding?: number[] | string }>;
  usage?: { prompt_tokens?: number; total_tokens?: number } | null;
}

/** The Jina/Cohere-style answer OpenAI-compatible servers (vLLM and others) give at `/rerank`. */
export interface OpenAICompatibleRerankResponse {
  results?: Array<{ index?: number; relevance_score?: number; score?: number }>;
  usage?: { total_tokens?: number } | null;
}

/** OpenAI's documented limits for one embeddings request. */
export const OPENAI_EMBEDDING_LIMITS = { maxInputs: 2048, maxTokens: 300_000 };

export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';
