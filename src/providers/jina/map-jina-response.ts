import { GatewayError } from '../../errors/index.js';
import type { EmbeddingResult, RerankResult } from '../provider-adapter.js';
import type { JinaEmbeddingsResponse, JinaRerankResponse } from './jina-api.js';

export function mapJinaEmbeddingsResponse(response: JinaEmbeddingsResponse, inputCount: number, upstreamId: string): EmbeddingResult {
  const data = response.data ?? [];
  const vectors: Array<number[] | undefined> = Array.from({ length: inputCount }, () => undefined);
  // Each item names its input's index; an item without one is taken at its position.
  data.forEach((item, position) => {
    const index = typeof item.index === 'number' ? item.index : position;
    if (index >= 0 && index < inputCount && isNumberArray(item.embedding)) vectors[index] = item.embedding;
  });
  // A missing or repeated index leaves a gap: never answer with a vector at the wrong input.
  if (data.length !== inputCount || !vectors.every((vector) => vector !== undefined)) {
    throw new GatewayError('upstream_invalid_response', `Upstream ${upstreamId} returned ${data.length} embeddings for ${inputCount} inputs.`);
  }
  const tokens = response.usage?.prompt_tokens ?? response.usage?.total_tokens;
  return { vectors: vectors as number[][], promptTokens: typeof tokens === 'number' ? tokens : null };
}

export function mapJinaRerankResponse(response: JinaRerankResponse, upstreamId: string): RerankResult {
  const scores = (response.results ?? []).flatMap((result) =>
    typeof result.index === 'number' && typeof result.relevance_score === 'number' ? [{ index: result.index, score: result.relevance_score }] : [],
  );
  if (scores.length === 0) throw new GatewayError('upstream_invalid_response', `Upstream ${upstreamId} returned no rerank results.`);
  const totalTokens = response.usage?.total_tokens;
  return { scores, totalTokens: typeof totalTokens === 'number' ? totalTokens : null };
}

function isNumberArray(value: unknown): value is number[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'number');
}
