import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { anthropicErrorDialect, mapAnthropicStreamError } from './map-anthropic-error.js';
import { errorMapping } from '../../../test/support/error-dialect.js';

const mapAnthropicError = errorMapping(anthropicErrorDialect);

function errorFixture(name: string): string {
  return readFileSync(new URL(`../../../test/fixtures/anthropic/errors/${name}`, import.meta.url), 'utf8');
}

describe('mapAnthropicError', () => {
  it('keeps a 400 as the caller’s bad request, with Anthropic’s message', () => {
    const error = mapAnthropicError(400, errorFixture('400-invalid-request-error.json'), undefined, 'claude');
    expect(error).toMatchObject({ code: 'upstream_bad_request', status: 400, retryable: false, message: 'tools.0.custom.input_schema.type: Field required' });
  });

  it('reports a refused credential as upstream_auth_failed (502, retryable)', () => {
    const error = mapAnthropicError(401, errorFixture('401-authentication-error.json'), undefined, 'claude');
    expect(error).toMatchObject({ code: 'upstream_auth_failed', status: 502, retryable: true });
    expect(error.message).toContain('invalid x-api-key');
  });

  it('passes rate limiting on with Retry-After', () => {
    const error = mapAnthropicError(429, errorFixture('429-rate-limit-error.json'), { 'retry-after': '17' }, 'claude');
    expect(error).toMatchObject({ code: 'upstream_rate_limited', status: 429, retryAfterSeconds: 17, retryable: true });
    expect(error.message).toContain("This request would exceed your account's rate limit.");
  });

  it('treats 500 and 529 overloaded as retryable upstream errors', () => {
    expect(mapAnthropicError(500, errorFixture('500-api-error.json'), undefined, 'claude')).toMatchObject({
      code: 'upstream_error',
      status: 502,
      retryable: true,
    });
    const overloaded = mapAnthropicError(529, errorFixture('529-overloaded-error.json'), undefined, 'claude');
    expect(overloaded).toMatchObject({ code: 'upstream_error', status: 502, retryable: true });
    expect(overloaded.message).toContain('Overloaded');
  });

  it('maps timeouts and survives a body that is not JSON', () => {
    expect(mapAnthropicError(504, '<html>Gateway Timeout</html>', undefined, 'claude')).toMatchObject({ code: 'upstream_timeout', status: 504 });
  });
});

describe('mapAnthropicStreamError', () => {
  it('maps in-stream error types like the statuses they stand for', () => {
    expect(mapAnthropicStreamError({ type: 'overloaded_error', message: 'Overloaded' }, 'claude')).toMatchObject({ code: 'upstream_error', retryable: true });
    expect(mapAnthropicStreamError({ type: 'rate_limit_error', message: 'slow down' }, 'claude')).toMatchObject({ code: 'upstream_rate_limited' });
    expect(mapAnthropicStreamError({ type: 'invalid_request_error', message: 'bad' }, 'claude')).toMatchObject({ code: 'upstream_bad_request' });
    expect(mapAnthropicStreamError(null, 'claude')).toMatchObject({ code: 'upstream_error' });
  });
});
