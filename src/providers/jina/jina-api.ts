/**
 * The parts of Jina AI's Search Foundation API (https://api.jina.ai/openapi.json) the gateway
 * writes and reads: `POST /v1/embeddings` (OpenAI-like) and `POST /v1/rerank`.
 */

export interface JinaEmbeddingsRequest {
  model: string;
  input: string[];
  /** Matryoshka truncation, for the models that support it (jina-embeddings-v3 and later). */
  dimensions?: number;
  embedding_type: 'float';
}

export interface JinaEmbeddingsResponse {
  model?: string;
  data?: Array<{ index?: unknown; embedding?: unknown }> | null;
  usage?: { total_tokens?: number; prompt_tokens?: number } | null;
}

export interface JinaRerankRequest {
  model: string;
  query: string;
  documents: string[];
  top_n?: number;
  /** The gateway attaches documents itself; asking Jina not to echo them saves bandwidth. */
  return_documents: false;
}

export interface JinaRerankResponse {
  model?: string;
  usage?: { total_tokens?: number } | null;
  results?: Array<{ index?: unknown; relevance_score?: unknown }> | null;
}

/**
 * Jina answers errors FastAPI-style: `{"detail": "…"}`, or for a body that fails validation
 * `{"detail": [{"loc": […], "msg": "…", "type": "…"}]}`.
 */
export interface JinaErrorBody {
  detail?: unknown;
  message?: unknown;
}

export const DEFAULT_JINA_BASE_URL = 'https://api.jina.ai/v1';

/**
 * Jina documents no cap on inputs per call that we could find; 2048 is the gateway's own cap per
 * request, so a request is sent whole unless `max_embedding_inputs` says otherwise.
 */
export const JINA_EMBEDDING_LIMITS = { maxInputs: 2048, maxTokens: Number.MAX_SAFE_INTEGER };
