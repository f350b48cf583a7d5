import { GatewayError } from '../../errors/index.js';
import { parseRetryAfter } from '../../core/index.js';
import type { AnthropicErrorBody, AnthropicErrorObject } from './anthropic-api.js';

/**
 * An Anthropic error response (`{"type":"error","error":{"type","message"}}`) as a GatewayError.
 * The caller's mistakes (400, 413, 422) keep the upstream's message; our credential's problems
 * (401, 403), rate limits (429), overload (529) and other failures are retryable elsewhere.
 */
export function mapAnthropicError(status: number, bodyText: string, retryAfterHeader: string | undefined, upstreamId: string): GatewayError {
  const upstreamError = parseError(bodyText);
  const message = upstreamError?.message ?? (bodyText.trim().slice(0, 200) || `status ${status}`);
  if (status === 400 || status === 413 || status === 422) return new GatewayError('upstream_bad_request', message);
  if (status === 401 || status === 403) {
    return new GatewayError('upstream_auth_failed', `Upstream ${upstreamId} refused the gateway's credential: ${message}`);
  }
  if (status === 404) return new GatewayError('upstream_error', `Upstream ${upstreamId} answered 404: ${message}`);
  if (status === 429) {
    return new GatewayError('upstream_rate_limited', `Upstream ${upstreamId} is rate limiting: ${message}`, {
      retryAfterSeconds: parseRetryAfter(retryAfterHeader) ?? 1,
    });
  }
  if (status === 408 || status === 504) return new GatewayError('upstream_timeout', `Upstream ${upstreamId} timed out (status ${status}): ${message}`);
  // 529 is Anthropic's "overloaded": another credential or vendor may well answer.
  return new GatewayError('upstream_error', `Upstream ${upstreamId} failed with status ${status}: ${message}`);
}

/**
 * An `error` event inside a stream that had started. Anthropic sends the error types it would
 * have answered with as a status, so they are mapped the same way.
 */
export function mapAnthropicStreamError(error: AnthropicErrorObject | null | undefined, upstreamId: string): GatewayError {
  const type = error?.type ?? 'api_error';
  const message = `Upstream ${upstreamId} failed mid-stream (${type}): ${error?.message ?? 'unknown error'}`;
  switch (type) {
    case 'invalid_request_error':
    case 'request_too_large':
      return new GatewayError('upstream_bad_request', message);
    case 'authentication_error':
    case 'permission_error':
      return new GatewayError('upstream_auth_failed', message);
    case 'rate_limit_error':
      return new GatewayError('upstream_rate_limited', message, { retryAfterSeconds: 1 });
    case 'timeout_error':
      return new GatewayError('upstream_timeout', message);
    default:
      // overloaded_error, api_error and types added later: the upstream's failure, retryable.
      return new GatewayError('upstream_error', message);
  }
}

function parseError(bodyText: string): AnthropicErrorObject | null {
  try {
    const body = JSON.parse(bodyText) as AnthropicErrorBody;
    if (typeof body.error === 'object' && body.error !== null) return body.error;
  } catch {
    // Not JSON (a proxy's HTML page, say): the raw text is the message.
  }
  return null;
}
