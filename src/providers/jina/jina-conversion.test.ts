import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { JinaEmbeddingsResponse, JinaRerankResponse } from './jina-api.js';
import { convertJinaEmbeddingsRequest, convertJinaRerankRequest } from './convert-jina-request.js';
import { jinaErrorDialect } from './map-jina-error.js';
import { mapJinaEmbeddingsResponse, mapJinaRerankResponse } from './map-jina-response.js';
import { errorMapping } from '../../../test/support/error-dialect.js';

const mapJinaError = errorMapping(jinaErrorDialect);

const fixture = (name: string) => readFileSync(new URL(`../../../test/fixtures/jina/${name}`, import.meta.url), 'utf8');
const cancellation = new AbortController().signal;

describe('Jina request conversion', () => {
  it('sends strings as input with float embeddings, and dimensions only when asked', () => {
    const call = { model: 'jina-embeddings-v3', inputs: ['a', 'b'], encodingFormat: 'base64' as const, cancellation };
    expect(convertJinaEmbeddingsRequest(call)).toEqual({ model: 'jina-embeddings-v3', input: ['a', 'b'], embedding_type: 'float' });
    expect(convertJinaEmbeddingsRequest({ ...call, dimensions: 64 })).toMatchObject({ dimensions: 64 });
  });

  it('refuses token arrays as a bad request', () => {
    expect(() => convertJinaEmbeddingsRequest({ model: 'm', inputs: [[1, 2]], encodingFormat: 'float', cancellation })).toThrow(
      expect.objectContaining({ code: 'upstream_bad_request', param: 'input' }),
    );
  });

  it('asks rerank for no documents back, and passes top_n when given', () => {
    const call = { model: 'jina-reranker-v2-base-multilingual', query: 'q', documents: ['x'], cancellation };
    expect(convertJinaRerankRequest(call)).toEqual({ model: 'jina-reranker-v2-base-multilingual', query: 'q', documents: ['x'], return_documents: false });
    expect(convertJinaRerankRequest({ ...call, topN: 3 })).toMatchObject({ top_n: 3 });
  });
});

describe('Jina response mapping, from recorded responses', () => {
  it('places vectors at their index and reads prompt_tokens', () => {
    const recorded = JSON.parse(fixture('embeddings.json')) as JinaEmbeddingsResponse;
    expect(mapJinaEmbeddingsResponse(recorded, 2, 'jina')).toEqual({
      vectors: [
        [0.39906722, -0.38789722, 0.45774525],
        [0.22698139, -0.17781383, 0.41603658],
      ],
      promptTokens: 13,
    });
    // Out of order on the wire: each vector still lands at its own index.
    const reversed = { ...recorded, data: [...(recorded.data ?? [])].reverse() };
    expect(mapJinaEmbeddingsResponse(reversed, 2, 'jina').vectors[0]).toEqual([0.39906722, -0.38789722, 0.45774525]);
  });

  it('refuses a missing or repeated index rather than misplacing a vector', () => {
    const twice = {
      data: [
        { index: 0, embedding: [1] },
        { index: 0, embedding: [2] },
      ],
    };
    expect(() => mapJinaEmbeddingsResponse(twice, 2, 'jina')).toThrow(expect.objectContaining({ code: 'upstream_invalid_response' }));
    expect(() => mapJinaEmbeddingsResponse({ data: [{ index: 0, embedding: [1] }] }, 2, 'jina')).toThrow(
      expect.objectContaining({ code: 'upstream_invalid_response' }),
    );
    expect(mapJinaEmbeddingsResponse({ data: [{ index: 0, embedding: [1] }] }, 1, 'jina').promptTokens).toBeNull();
  });

  it('keeps rerank scores with their original indexes and the total tokens', () => {
    const recorded = JSON.parse(fixture('rerank.json')) as JinaRerankResponse;
    expect(mapJinaRerankResponse(recorded, 'jina')).toEqual({
      scores: [
        { index: 0, score: 0.23231014609336853 },
        { index: 2, score: 0.16026602685451508 },
        { index: 1, score: 0.09401018172502518 },
        { index: 3, score: 0.08509904146194458 },
      ],
      totalTokens: 50,
    });
  });
});

describe('Jina error mapping', () => {
  it('reads detail strings, and FastAPI validation lists naming the field', () => {
    expect(mapJinaError(401, fixture('errors/401-invalid-api-key.json'), undefined, 'jina')).toMatchObject({ code: 'upstream_auth_failed', status: 502 });
    const invalid = mapJinaError(422, fixture('errors/422-validation.json'), undefined, 'jina');
    expect(invalid).toMatchObject({ code: 'upstream_bad_request', status: 400, message: 'body.input: Field required' });
  });

  it('treats an empty balance as the credential problem, and 429 as a rate limit with Retry-After', () => {
    expect(mapJinaError(403, fixture('errors/403-insufficient-balance.json'), undefined, 'jina').code).toBe('upstream_auth_failed');
    expect(mapJinaError(402, '{"detail":"payment required"}', undefined, 'jina').code).toBe('upstream_auth_failed');
    expect(mapJinaError(429, '{"detail":"slow down"}', { 'retry-after': '3' }, 'jina')).toMatchObject({ code: 'upstream_rate_limited', retryAfterSeconds: 3 });
    expect(mapJinaError(503, 'upstream connect error', undefined, 'jina')).toMatchObject({ code: 'upstream_error', status: 502 });
  });
});
