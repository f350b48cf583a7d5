import type { IncomingHttpHeaders } from 'node:http';
import { parseRetryAfter } from '../../core/index.js';
import { GatewayError, isGatewayError, type FailureClass, type UpstreamFailure } from '../../errors/index.js';

/** What a provider reads in its own error bodies; everything else about a failure is classified here, once. */
export interface ErrorDialect {
  read(status: number, bodyText: string): DialectReading | null;
}

export interface DialectReading {
  /** The upstream's explanation. */
  message?: string | undefined;
  /** The request field it names (kept for the caller's own mistakes). */
  param?: string | null | undefined;
  /** When the body says more than the status: a bad key answered 400, a spent quota answered 429. */
  class?: FailureClass | undefined;
  /** A delay the body carries besides `Retry-After` (Gemini's RetryInfo). */
  retryAfterSeconds?: number | undefined;
}

/**
 * What the status alone says. A 404 or 405 is the request's (a model the upstream does not know,
 * an operation its server does not serve): another credential of the pool would answer the same,
 * and the credential is not failing.
 */
export function classOfStatus(status: number): FailureClass {
  if (status === 400 || status === 404 || status === 405 || status === 413 || status === 422) return 'caller';
  if (status === 401 || status === 403) return 'auth';
  if (status === 402) return 'quota';
  if (status === 429) return 'rate_limit';
  if (status === 408 || status === 504) return 'timeout';
  if (status === 503 || status === 529) return 'overloaded';
  return 'server';
}

const RATE_LIMIT_HEADER = /^(x-ratelimit-|anthropic-ratelimit-|retry-after)/;

/** The headers that tell a credential's rate-limit state, as sent. */
export function rateLimitHeaders(headers: IncomingHttpHeaders | undefined): Record<string, string> {
  const found: Record<string, string> = {};
  if (headers === undefined) return found;
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && RATE_LIMIT_HEADER.test(name)) found[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return found;
}

/** A non-2xx answer as a classified GatewayError. */
export function classifyAnswer(
  status: number,
  headers: IncomingHttpHeaders | undefined,
  bodyText: string,
  credentialId: string,
  dialect: ErrorDialect,
): GatewayError {
  const reading = dialect.read(status, bodyText);
  const limits = rateLimitHeaders(headers);
  const retryAfter = parseRetryAfter(limits['retry-after']) ?? reading?.retryAfterSeconds ?? null;
  const message = reading?.message?.trim() || bodyText.trim().slice(0, 200) || `status ${status}`;
  const failure: UpstreamFailure = {
    class: reading?.class ?? classOfStatus(status),
    status,
    retryAfterSeconds: retryAfter,
    rateLimitHeaders: limits,
    credentialId,
    message,
  };
  return failureError(failure, reading?.param ?? null);
}

/**
 * A failure below HTTP (refused, reset, timed out) as a classified GatewayError. All are
 * retryable on another credential, except the caller's own abort, which nobody should retry.
 */
export function classifyTransport(error: unknown, credentialId: string): GatewayError {
  if (isGatewayError(error)) return error;
  const code = errorCode(error);
  const failure = (failureClass: FailureClass, message: string): UpstreamFailure => ({
    class: failureClass,
    status: null,
    retryAfterSeconds: null,
    rateLimitHeaders: {},
    credentialId,
    message,
  });
  if (code !== undefined && TIMEOUT_CODES.has(code)) {
    // Answered as a timeout, but classed as the connection failure it is: nothing was sent, so no
    // request can have caused it (docs/routing.md: it cools the credential at once).
    return new GatewayError('upstream_timeout', `Upstream ${credentialId} timed out (${code}).`, { cause: error, upstream: failure('connect', code) });
  }
  if (code === 'HTTP1_PROTOCOL' || code?.startsWith('HPE_') === true) {
    const detail = (error as Error).message;
    return new GatewayError('upstream_invalid_response', `Upstream ${credentialId} sent an invalid HTTP response (${detail}).`, {
      cause: error,
      upstream: failure('protocol', detail),
    });
  }
  if (error instanceof Error && error.name === 'AbortError') {
    return new GatewayError('upstream_error', `Request to upstream ${credentialId} was aborted.`, { cause: error, retryable: false });
  }
  const reason = code ?? 'connection failed';
  return new GatewayError('upstream_error', `Upstream ${credentialId} could not be reached (${reason}).`, {
    cause: error,
    upstream: failure('connect', reason),
  });
}

// First-byte and idle timeouts are the upstream client's own GatewayErrors; these are the connect's
// (the gateway's connector, undici's, the kernel's). A protocol error is ours or llhttp's (`HPE_*`);
// a proxy that answers CONNECT with nonsense is a connect failure: the upstream was never reached.
const TIMEOUT_CODES = new Set(['UPSTREAM_CONNECT_TIMEOUT', 'ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT']);

/** The one mapping of a classified failure to the gateway's error codes (and so to HTTP). */
export function failureError(failure: UpstreamFailure, param: string | null = null): GatewayError {
  const { credentialId: id, status, message } = failure;
  const options = { upstream: failure };
  switch (failure.class) {
    case 'caller':
      return new GatewayError('upstream_bad_request', message, { ...options, param });
    case 'auth':
      return new GatewayError('upstream_auth_failed', `Upstream ${id} refused the gateway's credential (status ${status ?? '-'}): ${message}`, options);
    case 'quota':
      // A spent quota answered 429 (OpenAI's insufficient_quota) stays a 429 to the caller, as before.
      return status === 429
        ? new GatewayError('upstream_rate_limited', `Upstream ${id} is out of quota: ${message}`, {
            ...options,
            retryAfterSeconds: failure.retryAfterSeconds ?? 1,
          })
        : new GatewayError('upstream_auth_failed', `Upstream ${id}'s credential is out of quota or balance (status ${status ?? '-'}): ${message}`, options);
    case 'rate_limit':
      return new GatewayError('upstream_rate_limited', `Upstream ${id} is rate limiting: ${message}`, {
        ...options,
        retryAfterSeconds: failure.retryAfterSeconds ?? 1,
      });
    case 'timeout':
      return new GatewayError('upstream_timeout', `Upstream ${id} timed out (status ${status ?? '-'}): ${message}`, options);
    case 'overloaded':
      return new GatewayError('upstream_error', `Upstream ${id} is overloaded (status ${status ?? '-'}): ${message}`, options);
    case 'protocol':
      return new GatewayError('upstream_invalid_response', `Upstream ${id} answered outside its protocol: ${message}`, options);
    case 'connect':
      return new GatewayError('upstream_error', `Upstream ${id} could not be reached: ${message}`, options);
    case 'server':
      return new GatewayError('upstream_error', `Upstream ${id} failed with status ${status ?? '-'}: ${message}`, options);
  }
}

function errorCode(error: unknown): string | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const { code, cause } = error as { code?: unknown; cause?: unknown };
  if (typeof code === 'string') return code;
  return cause === undefined ? undefined : errorCode(cause);
}
