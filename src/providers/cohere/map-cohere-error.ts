import { GatewayError } from '../../errors/index.js';
import { parseRetryAfter } from '../../core/index.js';
import type { CohereErrorBody } from './cohere-api.js';

/**
 * A Cohere error response as a GatewayError. The caller's mistakes keep Cohere's message and are
 * not retried; the credential's problems (401, 402 billing, 403), rate limits and Cohere's own
 * failures are retryable on another credential.
 */
export function mapCohereError(status: number, bodyText: string, retryAfterHeader: string | undefined, upstreamId: string): GatewayError {
  const message = cohereErrorMessage(bodyText) ?? (bodyText.trim().slice(0, 200) || `status ${status}`);
  // 498: Cohere blocked the request under its usage guidelines; the same request fails everywhere.
  if (status === 400 || status === 413 || status === 422 || status === 498) {
    return new GatewayError('upstream_bad_request', message);
  }
  if (status === 401 || status === 402 || status === 403) {
    return new GatewayError('upstream_auth_failed', `Upstream ${upstreamId} refused the gateway's credential (status ${status}): ${message}`);
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

function cohereErrorMessage(bodyText: string): string | null {
  try {
    const body = JSON.parse(bodyText) as CohereErrorBody | null;
    if (typeof body === 'object' && body !== null && typeof body.message === 'string') return body.message;
  } catch {
    // Not JSON (a proxy's HTML page, say): the raw text is the message.
  }
  return null;
}
