import { describe, expect, it } from 'vitest';
import { classifyAnswer, classifyTransport, classOfStatus, rateLimitHeaders, type ErrorDialect } from './classify-upstream-failure.js';

const plain: ErrorDialect = { read: () => null };

describe('classifyAnswer', () => {
  it('classes a status the same way for every provider', () => {
    expect([400, 404, 405, 413, 422, 401, 403, 402, 429, 408, 504, 503, 529, 500, 502].map(classOfStatus)).toEqual([
      'caller',
      'caller',
      'caller',
      'caller',
      'caller',
      'auth',
      'auth',
      'quota',
      'rate_limit',
      'timeout',
      'timeout',
      'overloaded',
      'overloaded',
      'server',
      'server',
    ]);
    // A 404 (an unknown model, a path the server lacks) is the request's: 400 to the caller, nothing to fail over to.
    expect(classifyAnswer(404, undefined, '{"detail":"Not Found"}', 'key-a', plain)).toMatchObject({
      code: 'upstream_bad_request',
      status: 400,
      retryable: false,
    });
  });

  it('keeps the class, status, delay, rate-limit headers and credential, and maps to one code', () => {
    const error = classifyAnswer(
      429,
      { 'retry-after': '7', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '6s', 'content-type': 'application/json' },
      '{"error":{"message":"slow down"}}',
      'key-a',
      { read: () => ({ message: 'slow down' }) },
    );
    expect(error).toMatchObject({ code: 'upstream_rate_limited', status: 429, retryable: true, retryAfterSeconds: 7 });
    expect(error.upstream).toEqual({
      class: 'rate_limit',
      status: 429,
      retryAfterSeconds: 7,
      rateLimitHeaders: { 'retry-after': '7', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '6s' },
      credentialId: 'key-a',
      message: 'slow down',
    });
  });

  it('lets the provider say what the status does not, and keeps the caller code for each class', () => {
    const spent = classifyAnswer(429, undefined, '', 'key-a', { read: () => ({ message: 'quota', class: 'quota', retryAfterSeconds: 30 }) });
    expect(spent).toMatchObject({ code: 'upstream_rate_limited', retryAfterSeconds: 30, upstream: { class: 'quota' } });
    const unpaid = classifyAnswer(402, undefined, 'pay up', 'key-a', plain);
    expect(unpaid).toMatchObject({ code: 'upstream_auth_failed', status: 502, upstream: { class: 'quota', message: 'pay up' } });
    const badKey = classifyAnswer(400, undefined, '', 'key-a', { read: () => ({ class: 'auth', message: 'API key not valid' }) });
    expect(badKey).toMatchObject({ code: 'upstream_auth_failed', upstream: { class: 'auth' } });
    const caller = classifyAnswer(400, undefined, '', 'key-a', { read: () => ({ message: 'messages is required', param: 'messages' }) });
    expect(caller).toMatchObject({ code: 'upstream_bad_request', status: 400, retryable: false, param: 'messages', message: 'messages is required' });
    expect(classifyAnswer(529, undefined, 'Overloaded', 'key-a', plain)).toMatchObject({ code: 'upstream_error', upstream: { class: 'overloaded' } });
    expect(classifyAnswer(504, undefined, '', 'key-a', plain)).toMatchObject({
      code: 'upstream_timeout',
      upstream: { class: 'timeout', message: 'status 504' },
    });
  });

  it('reads only the rate-limit headers', () => {
    expect(rateLimitHeaders({ 'anthropic-ratelimit-requests-remaining': '3', 'retry-after-ms': '250', authorization: 'x', 'set-cookie': ['a', 'b'] })).toEqual({
      'anthropic-ratelimit-requests-remaining': '3',
      'retry-after-ms': '250',
    });
  });
});

describe('classifyTransport', () => {
  it('tells a refused connection from a timeout and a broken protocol, and leaves the caller abort unretried', () => {
    expect(classifyTransport(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), 'key-a')).toMatchObject({
      code: 'upstream_error',
      retryable: true,
      upstream: { class: 'connect', status: null, credentialId: 'key-a', message: 'ECONNREFUSED' },
    });
    // A connect that timed out sent nothing: a connection failure, whatever its code says.
    expect(classifyTransport(Object.assign(new Error('t'), { code: 'ETIMEDOUT' }), 'key-a')).toMatchObject({
      code: 'upstream_timeout',
      upstream: { class: 'connect' },
    });
    expect(classifyTransport(Object.assign(new Error('bad chunk'), { code: 'HTTP1_PROTOCOL' }), 'key-a')).toMatchObject({
      code: 'upstream_invalid_response',
      upstream: { class: 'protocol' },
    });
    const abort = Object.assign(new Error('aborted'), { name: 'AbortError' });
    expect(classifyTransport(abort, 'key-a')).toMatchObject({ code: 'upstream_error', retryable: false, upstream: undefined });
  });
});
