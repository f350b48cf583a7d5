import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/index.js';
import type { CohereEmbedResponse, CohereRerankResponse } from './cohere-api.js';
import { convertCohereEmbedRequest, convertCohereRerankRequest } from './convert-cohere-request.js';
import { cohereErrorDialect } from './map-cohere-error.js';
import { mapCohereEmbedResponse, mapCohereRerankResponse } from './map-cohere-response.js';
import { errorMapping } from '../../../test/support/error-dialect.js';

const mapCohereError = errorMapping(cohereErrorDialect);

const fixture = (name: string) => readFileSync(new URL(`../../../test/fixtures/cohere/${name}`, import.meta.url), 'utf8');
const cancellation = new AbortController().signal;

describe('Cohere request conversion', () => {
  it('sends texts as search documents with float embeddings, and output_dimension only when asked', () => {
    const call = { model: 'embed-v4.0', inputs: ['a', 'b'], encodingFormat: 'base64' as const, cancellation };
    expect(convertCohereEmbedRequest(call)).toEqual({ model: 'embed-v4.0', texts: ['a', 'b'], input_type: 'search_document', embedding_types: ['float'] });
    expect(convertCohereEmbedRequest({ ...call, dimensions: 256 })).toMatchObject({ output_dimension: 256 });
  });

  it('refuses token arrays as a bad request naming the input', () => {
    const refuse = () => convertCohereEmbedRequest({ model: 'm', inputs: ['ok', [1, 2]], encodingFormat: 'float', cancellation });
    expect(refuse).toThrow(GatewayError);
    expect(refuse).toThrow(expect.objectContaining({ code: 'upstream_bad_request', param: 'input', retryable: false }));
  });

  it('passes top_n only when given', () => {
    const call = { model: 'rerank-v3.5', query: 'q', documents: ['x', 'y'], cancellation };
    expect(convertCohereRerankRequest(call)).toEqual({ model: 'rerank-v3.5', query: 'q', documents: ['x', 'y'] });
    expect(convertCohereRerankRequest({ ...call, topN: 1 })).toMatchObject({ top_n: 1 });
  });
});

describe('Cohere response mapping, from recorded responses', () => {
  it('reads the float vectors in input order and the billed input tokens', () => {
    const recorded = JSON.parse(fixture('embed.json')) as CohereEmbedResponse;
    const result = mapCohereEmbedResponse(recorded, 2, 'co');
    expect(result.promptTokens).toBe(10);
    expect(result.vectors[0]?.slice(0, 2)).toEqual([0.03302002, 0.020904541]);
    expect(result.vectors[1]?.slice(0, 2)).toEqual([-0.04660034, 0.00037765503]);
  });

  it('says null usage without billed units, and refuses a vector count that does not match', () => {
    expect(mapCohereEmbedResponse({ embeddings: { float: [[1]] } }, 1, 'co').promptTokens).toBeNull();
    expect(() => mapCohereEmbedResponse({ embeddings: { float: [[1]] } }, 2, 'co')).toThrow(expect.objectContaining({ code: 'upstream_invalid_response' }));
    expect(() => mapCohereEmbedResponse({ embeddings: null }, 1, 'co')).toThrow(expect.objectContaining({ code: 'upstream_invalid_response' }));
  });

  it('keeps rerank scores with their original indexes, and reports no tokens (search units are not tokens)', () => {
    const recorded = JSON.parse(fixture('rerank.json')) as CohereRerankResponse;
    expect(mapCohereRerankResponse(recorded, 'co')).toEqual({
      scores: [
        { index: 1, score: 0.10183054 },
        { index: 0, score: 0.03762639 },
      ],
      totalTokens: null,
    });
    expect(() => mapCohereRerankResponse({ results: [] }, 'co')).toThrow(expect.objectContaining({ code: 'upstream_invalid_response' }));
  });
});

describe('Cohere error mapping, from recorded error bodies', () => {
  it('maps 401 to upstream_auth_failed with Cohere message', () => {
    const error = mapCohereError(401, fixture('errors/401-invalid-api-token.json'), undefined, 'co');
    expect(error).toMatchObject({ code: 'upstream_auth_failed', status: 502, retryable: true });
    expect(error.message).toContain('invalid api token');
  });

  it('maps 429 to upstream_rate_limited with Retry-After', () => {
    const error = mapCohereError(429, fixture('errors/429-trial-key-limit.json'), { 'retry-after': '7' }, 'co');
    expect(error).toMatchObject({ code: 'upstream_rate_limited', status: 429, retryAfterSeconds: 7 });
    expect(error.message).toContain('Trial key');
    expect(mapCohereError(429, '{}', undefined, 'co').retryAfterSeconds).toBe(1);
  });

  it('maps the caller mistakes to upstream_bad_request with the upstream message verbatim', () => {
    const body = fixture('errors/400-invalid-request.json');
    expect(mapCohereError(400, body, undefined, 'co')).toMatchObject({
      code: 'upstream_bad_request',
      status: 400,
      retryable: false,
      message: JSON.parse(body).message,
    });
    expect(mapCohereError(422, body, undefined, 'co').code).toBe('upstream_bad_request');
    expect(mapCohereError(498, body, undefined, 'co').code).toBe('upstream_bad_request');
  });

  it('maps billing, timeouts and server failures, and survives a body that is not JSON', () => {
    expect(mapCohereError(402, '{"message":"billing"}', undefined, 'co').code).toBe('upstream_auth_failed');
    expect(mapCohereError(504, '', undefined, 'co').code).toBe('upstream_timeout');
    const html = mapCohereError(500, '<html>bad gateway</html>', undefined, 'co');
    expect(html).toMatchObject({ code: 'upstream_error', status: 502 });
    expect(html.message).toContain('<html>bad gateway</html>');
  });
});
