import { parseRetryAfter } from '../../core/index.js';
import { GatewayError } from '../../errors/index.js';
import type { OpenAIErrorBody, OpenAIErrorObject } from './openai-api.js';

/**
 * An upstream's error response as a GatewayError. The caller's own mistakes (400, 422) keep
 * their status and the upstream's message; our credential's problems (401, 403), its rate
 * limits (429) and the upstream's failures (5xx) are retryable on another credential.
 */
export function mapOpenAIError(status: number, bodyText: string, retryAfterHeader: string | undefined, upstreamId: string): GatewayError {
  const upstreamError = parseError(bodyText);
  const message = typeof upstreamError?.message === 'string' ? upstreamError.message : bodyText.trim().slice(0, 200) || `status ${status}`;
  const param = typeof upstreamError?.param === 'string' ? upstreamError.param : null;
  if (status === 400 || status === 422 || status === 413) {
    return new GatewayError('upstream_bad_request', message, { param });
  }
  if (status === 401 || status === 403) {
    return new GatewayError('upstream_auth_failed', `Upstream ${upstreamId} refused the gateway's credential: ${message}`);
  }
  if (status === 404) {
    return new GatewayError('upstream_error', `Upstream ${upstreamId} answered 404: ${message}`);
  }
  if (status === 429) {
    return new GatewayError('upstream_rate_limited', `Upstream ${upstreamId} is rate limiting: ${message}`, {
      retryAfterSeconds: parseRetryAfter(retryAfterHeader) ?? 1,
    });
  }
  if (status === 408 || status === 504) {
    return new GatewayError('upstream_timeout', `Upstream ${upstreamId} timed out (status ${status}): ${message}`);
  }
  return new GatewayError('upstream_error', `Upstream ${upstreamId} failed with status ${status}: ${message}`);
}

/** An `error` object sent inside a stream after it started. */
export function mapOpenAIStreamError(error: OpenAIErrorObject | string, upstreamId: string): GatewayError {
  const message = typeof error === 'string' ? error : typeof error === 'object' && error !== null && typeof error.message === 'string' ? error.message : 'unknown error';
  return new GatewayError('upstream_error', `Upstream ${upstreamId} failed mid-stream: ${message}`);
}

function parseError(bodyText: string): OpenAIErrorObject | null {
  try {
    const body = JSON.parse(bodyText) as OpenAIErrorBody;
    if (typeof body.error === 'object' && body.error !== null) return body.error;
    if (typeof body.error === 'string') return { message: body.error };
    if (typeof body.message === 'string') return { message: body.message };
  } catch {
    // Not JSON: the raw text (trimmed) is the message.
  }
  return null;
}
