/**
 * The parts of Hugging Face text-embeddings-inference's native API (its `docs/openapi.json`) the
 * gateway writes and reads: `POST /embed` and `POST /rerank`. TEI serves one model per process,
 * so no request names a model, and it reports no token usage.
 */

export interface TeiEmbedRequest {
  /** Strings, or token ids of the served model's own tokenizer. */
  inputs: Array<string | number[]>;
  /** TEI's default too; said explicitly because OpenAI-style clients expect unit vectors. */
  normalize: true;
  /** Matryoshka truncation, accepted by TEI releases that have it (`test_mrl_embeddings`). */
  dimensions?: number;
}

/** One vector per input, in input order. */
export type TeiEmbedResponse = unknown;

export interface TeiRerankRequest {
  query: string;
  texts: string[];
  /** The gateway attaches documents itself. */
  return_text: false;
  /** Sigmoid-activated scores in [0, 1], the same scale as Cohere's and Jina's relevance_score. */
  raw_scores: false;
}

/** `[{index, score, text?}]`, sorted by score; may be any order as far as the gateway cares. */
export type TeiRerankResponse = unknown;

/** `{"error": "…", "error_type": "Validation" | "Tokenizer" | "Backend" | "Overloaded" | "Unhealthy"}` */
export interface TeiErrorBody {
  error?: unknown;
  error_type?: unknown;
}

/**
 * TEI refuses a request with more inputs than `--max-client-batch-size` (default 32, see
 * `docs/source/en/cli_arguments.md`); a deployment started with a larger value says so with
 * `max_embedding_inputs`. Tokens per request are bounded per input by TEI itself.
 */
export const TEI_EMBEDDING_LIMITS = { maxInputs: 32, maxTokens: Number.MAX_SAFE_INTEGER };
