import { GatewayError } from '../../errors/index.js';
import type { EmbeddingResult, RerankResult } from '../provider-adapter.js';
import type { CohereEmbedResponse, CohereRerankResponse } from './cohere-api.js';

export function mapCohereEmbedResponse(response: CohereEmbedResponse, inputCount: number, upstreamId: string): EmbeddingResult {
  const vectors = response.embeddings?.float;
  // Cohere returns the vectors in input order, with no index of their own: the count must match exactly.
  if (!Array.isArray(vectors) || vectors.length !== inputCount || !vectors.every(isNumberArray)) {
    const count = Array.isArray(vectors) ? vectors.length : 0;
    throw new GatewayError('upstream_invalid_response', `Upstream ${upstreamId} returned ${count} float embeddings for ${inputCount} inputs.`);
  }
  const inputTokens = response.meta?.billed_units?.input_tokens;
  return { vectors, promptTokens: typeof inputTokens === 'number' ? inputTokens : null };
}

export function mapCohereRerankResponse(response: CohereRerankResponse, upstreamId: string): RerankResult {
  const scores = (response.results ?? []).flatMap((result) =>
    typeof result.index === 'number' && typeof result.relevance_score === 'number' ? [{ index: result.index, score: result.relevance_score }] : [],
  );
  if (scores.length === 0) throw new GatewayError('upstream_invalid_response', `Upstream ${upstreamId} returned no rerank results.`);
  return { scores, totalTokens: null };
}

function isNumberArray(value: unknown): value is number[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'number');
}
