import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/index.js';
import { forCaller, nativeErrorBody } from './error-response.js';

const now = Date.parse('2026-11-24T12:00:00Z');

describe("the native endpoint's error body", () => {
  it('says a pool out of its usage limits the way Codex reads it, with the earliest reset', () => {
    const body = nativeErrorBody(
      forCaller(new GatewayError('upstream_quota_exhausted', 'Every credential of m is out of quota.', { retryAfterSeconds: 3_600 }), 'req_1'),
      now,
    );
    expect(body.error).toMatchObject({
      type: 'usage_limit_reached',
      code: 'upstream_quota_exhausted',
      resets_at: now / 1_000 + 3_600,
      resets_in_seconds: 3_600,
    });
    expect(body.error.message).toContain('req_1');
  });

  it('says so too when the attempts ran out on a spent quota before the pool did, and names no credential', () => {
    const failure = {
      class: 'quota' as const,
      status: 429,
      retryAfterSeconds: 600,
      rateLimitHeaders: {},
      credentialId: 'chatgpt-secret-name',
      message: 'The usage limit has been reached',
    };
    const body = nativeErrorBody(
      forCaller(
        new GatewayError('upstream_rate_limited', 'Upstream chatgpt-secret-name is out of quota', { retryAfterSeconds: 600, upstream: failure }),
        'req_2',
      ),
      now,
    );
    expect(body.error).toMatchObject({ type: 'usage_limit_reached', code: 'upstream_rate_limited', resets_at: now / 1_000 + 600 });
    expect(JSON.stringify(body)).not.toContain('chatgpt-secret-name');
  });

  it('leaves every other error as it is', () => {
    const body = nativeErrorBody(new GatewayError('model_not_native', 'not native', { param: 'model' }), now);
    expect(body).toEqual({ error: { message: 'not native', type: 'invalid_request_error', code: 'model_not_native', param: 'model' } });
  });
});
