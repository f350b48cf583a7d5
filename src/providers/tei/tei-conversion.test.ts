import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { convertTeiEmbedRequest, convertTeiRerankRequest } from './convert-tei-request.js';
import { teiErrorDialect } from './map-tei-error.js';
import { mapTeiEmbedResponse, mapTeiRerankResponse } from './map-tei-response.js';
import { createTeiAdapter } from './tei-adapter.js';
import { testEndpoint } from '../../../test/support/attempts.js';
import { errorMapping } from '../../../test/support/error-dialect.js';

const mapTeiError = errorMapping(teiErrorDialect);

const fixture = (name: string) => readFileSync(new URL(`../../../test/fixtures/tei/${name}`, import.meta.url), 'utf8');
const cancellation = new AbortController().signal;

describe('TEI request conversion', () => {
  it('sends strings and token ids as inputs, normalized, with dimensions only when asked', () => {
    const call = { model: 'ignored', inputs: ['a', [101, 3231, 102]], encodingFormat: 'float' as const, cancellation };
    expect(convertTeiEmbedRequest(call)).toEqual({ inputs: ['a', [101, 3231, 102]], normalize: true });
    expect(convertTeiEmbedRequest({ ...call, dimensions: 128 })).toMatchObject({ dimensions: 128 });
  });

  it('sends rerank texts without top_n, asking for no text back and activated scores', () => {
    expect(convertTeiRerankRequest({ model: 'm', query: 'q', documents: ['x', 'y'], topN: 1, cancellation })).toEqual({
      query: 'q',
      texts: ['x', 'y'],
      return_text: false,
      raw_scores: false,
    });
  });
});

describe('TEI response mapping, from recorded responses', () => {
  it('takes the bare vector array in input order, with no usage', () => {
    const recorded = JSON.parse(fixture('embed.json')) as number[][];
    const result = mapTeiEmbedResponse(recorded, 3, 'tei');
    expect(result.promptTokens).toBeNull();
    expect(result.vectors).toHaveLength(3);
    expect(result.vectors[2]).toHaveLength(128);
    expect(result.vectors[0]?.[0]).toBe(0.020964134);
    expect(() => mapTeiEmbedResponse(recorded, 4, 'tei')).toThrow(expect.objectContaining({ code: 'upstream_invalid_response' }));
    expect(() => mapTeiEmbedResponse({ error: 'x' }, 1, 'tei')).toThrow(expect.objectContaining({ code: 'upstream_invalid_response' }));
  });

  it('keeps each rank with its original index, ties included', () => {
    expect(mapTeiRerankResponse(JSON.parse(fixture('rerank.json')), 'tei')).toEqual({
      scores: [
        { index: 2, score: 0.9997739 },
        { index: 0, score: 0.9997739 },
        { index: 1, score: 0.3638598 },
      ],
      totalTokens: null,
    });
  });
});

describe('TEI error mapping, from recorded error bodies', () => {
  it('maps 413 (batch too large, empty input) and 422 to upstream_bad_request with TEI message', () => {
    expect(mapTeiError(413, fixture('errors/413-batch-size.json'), undefined, 'tei')).toMatchObject({
      code: 'upstream_bad_request',
      status: 400,
      message: 'batch size 1025 > maximum allowed batch size 1024',
    });
    expect(mapTeiError(413, fixture('errors/413-empty-inputs.json'), undefined, 'tei').message).toContain('cannot be empty');
    expect(mapTeiError(422, '{"error":"Tokenization error","error_type":"tokenizer"}', undefined, 'tei').code).toBe('upstream_bad_request');
  });

  it('maps 424 and 503 to upstream_error, 429 (overloaded) to a retryable rate limit', () => {
    expect(mapTeiError(424, fixture('errors/424-inference-failed.json'), undefined, 'tei')).toMatchObject({
      code: 'upstream_error',
      status: 502,
      retryable: true,
    });
    expect(mapTeiError(503, '{"error":"unhealthy","error_type":"unhealthy"}', undefined, 'tei').code).toBe('upstream_error');
    expect(mapTeiError(429, fixture('errors/429-overloaded.json'), undefined, 'tei')).toMatchObject({ code: 'upstream_rate_limited', retryAfterSeconds: 1 });
    expect(mapTeiError(401, '', undefined, 'tei').code).toBe('upstream_auth_failed');
  });
});

describe('TEI adapter configuration', () => {
  it('refuses to start without base_url (the config check reports it first, with its key)', () => {
    expect(() => createTeiAdapter(testEndpoint({ provider: 'tei', name: 'tei-a' }))).toThrow(/tei-a.*base_url/);
  });
});
