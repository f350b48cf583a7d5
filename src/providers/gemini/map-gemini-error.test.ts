import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { geminiErrorDialect } from './map-gemini-error.js';
import { errorMapping } from '../../../test/support/error-dialect.js';

const mapGeminiError = errorMapping(geminiErrorDialect);

function errorBody(name: string): string {
  return readFileSync(new URL(`../../../test/fixtures/gemini/errors/${name}`, import.meta.url), 'utf8');
}

describe('mapGeminiError', () => {
  it('keeps a bad request a 400 with Google’s message', () => {
    expect(mapGeminiError(400, errorBody('400-invalid-argument.json'), undefined, 'g')).toMatchObject({
      code: 'upstream_bad_request',
      status: 400,
      retryable: false,
      message: 'Penalty is not enabled for models/gemini-2.5-flash',
    });
    expect(mapGeminiError(400, errorBody('400-batch-limit.json'), undefined, 'g')).toMatchObject({
      code: 'upstream_bad_request',
      message: '* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch',
    });
  });

  it('treats an invalid key (a 400 with reason API_KEY_INVALID) and a 403 as credential failures', () => {
    expect(mapGeminiError(400, errorBody('400-api-key-invalid.json'), undefined, 'g')).toMatchObject({
      code: 'upstream_auth_failed',
      status: 502,
      retryable: true,
    });
    expect(mapGeminiError(403, errorBody('403-permission-denied.json'), undefined, 'g')).toMatchObject({ code: 'upstream_auth_failed', status: 502 });
    expect(mapGeminiError(401, '', undefined, 'g')).toMatchObject({ code: 'upstream_auth_failed' });
  });

  it('reads the retry delay of a 429 from Retry-After, else from RetryInfo', () => {
    expect(mapGeminiError(429, errorBody('429-resource-exhausted.json'), undefined, 'g')).toMatchObject({
      code: 'upstream_rate_limited',
      status: 429,
      retryAfterSeconds: 35,
    });
    expect(mapGeminiError(429, errorBody('429-resource-exhausted.json'), { 'retry-after': '7' }, 'g')).toMatchObject({ retryAfterSeconds: 7 });
    expect(mapGeminiError(429, '{"error":{"code":429,"status":"RESOURCE_EXHAUSTED"}}', undefined, 'g')).toMatchObject({ retryAfterSeconds: 1 });
  });

  it('maps server failures and timeouts to retryable upstream errors', () => {
    expect(mapGeminiError(500, errorBody('500-internal.json'), undefined, 'g')).toMatchObject({ code: 'upstream_error', status: 502, retryable: true });
    expect(mapGeminiError(503, errorBody('503-unavailable.json'), undefined, 'g').message).toContain('The model is overloaded');
    expect(mapGeminiError(504, '{"error":{"code":504,"status":"DEADLINE_EXCEEDED","message":"Deadline expired"}}', undefined, 'g')).toMatchObject({
      code: 'upstream_timeout',
    });
    expect(
      mapGeminiError(400, '{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"User location is not supported for the API use."}}', undefined, 'g'),
    ).toMatchObject({
      code: 'upstream_error',
      retryable: true,
    });
  });

  it('reads an error wrapped in an array, and falls back to the raw text', () => {
    expect(mapGeminiError(400, `[${errorBody('400-invalid-argument.json')}]`, undefined, 'g').message).toBe(
      'Penalty is not enabled for models/gemini-2.5-flash',
    );
    expect(mapGeminiError(502, '<html>Bad Gateway</html>', undefined, 'g').message).toContain('<html>Bad Gateway</html>');
  });
});
