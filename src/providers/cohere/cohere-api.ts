/**
 * The parts of Cohere's v2 wire format (https://docs.cohere.com/reference/embed and
 * https://docs.cohere.com/reference/rerank) the gateway writes and reads.
 */

export interface CohereEmbedRequest {
  model: string;
  texts: string[];
  /** Required for v3+ models; the gateway embeds for storage and search, Cohere's default use. */
  input_type: 'search_document';
  embedding_types: ['float'];
  /** Only embed-v4 and newer accept it; sent only when the client asked for `dimensions`. */
  output_dimension?: number;
}

export interface CohereEmbedResponse {
  id?: string;
  embeddings?: { float?: unknown } | null;
  meta?: { billed_units?: { input_tokens?: number } | null } | null;
}

export interface CohereRerankRequest {
  model: string;
  query: string;
  documents: string[];
  top_n?: number;
}

export interface CohereRerankResponse {
  id?: string;
  results?: Array<{ index?: unknown; relevance_score?: unknown }> | null;
  /** Rerank is billed in search units, not tokens: there is no token count to report. */
  meta?: { billed_units?: { search_units?: number } | null } | null;
}

/** Cohere's error body: `{"message": …}`, sometimes with an `id`. */
export interface CohereErrorBody {
  id?: string;
  message?: unknown;
}

export const DEFAULT_COHERE_BASE_URL = 'https://api.cohere.com';

/**
 * "Maximum number of texts per call is 96" (Embed API v2 reference). Cohere documents no cap on
 * the tokens of one call (long texts are truncated per input), so tokens do not split batches.
 */
export const COHERE_EMBEDDING_LIMITS = { maxInputs: 96, maxTokens: Number.MAX_SAFE_INTEGER };
