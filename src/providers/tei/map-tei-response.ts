import { GatewayError } from '../../errors/index.js';
import type { EmbeddingResult, RerankResult } from '../provider-adapter.js';
import type { TeiEmbedResponse, TeiRerankResponse } from './tei-api.js';

/** TEI answers a bare array of vectors in input order, and no usage: the gateway counts tokens itself. */
export function mapTeiEmbedResponse(response: TeiEmbedResponse, inputCount: number, upstreamId: string): EmbeddingResult {
  if (!Array.isArray(response) || response.length !== inputCount || !response.every(isNumberArray)) {
    const count = Array.isArray(response) ? response.length : 0;
    throw new GatewayError('upstream_invalid_response', `Upstream ${upstreamId} returned ${count} embeddings for ${inputCount} inputs.`);
  }
  return { vectors: response, promptTokens: null };
}

export function mapTeiRerankResponse(response: TeiRerankResponse, upstreamId: string): RerankResult {
  const ranks: unknown[] = Array.isArray(response) ? response : [];
  const scores = ranks.flatMap((rank) => {
    if (typeof rank !== 'object' || rank === null) return [];
    const { index, score } = rank as { index?: unknown; score?: unknown };
    return typeof index === 'number' && typeof score === 'number' ? [{ index, score }] : [];
  });
  if (scores.length === 0) throw new GatewayError('upstream_invalid_response', `Upstream ${upstreamId} returned no rerank results.`);
  return { scores, totalTokens: null };
}

function isNumberArray(value: unknown): value is number[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'number');
}
