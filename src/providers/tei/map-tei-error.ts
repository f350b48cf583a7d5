import { GatewayError } from '../../errors/index.js';
import { parseRetryAfter } from '../../core/index.js';
import type { TeiErrorBody } from './tei-api.js';

/**
 * A TEI error response as a GatewayError. 413 (too many inputs, empty input) and 422 (tokenizer:
 * input too long) are the caller's; 401/403 come from a deployment started with `--api-key`;
 * 429 means TEI is over `--max-concurrent-requests`; 424 (inference failed) and 503 (unhealthy)
 * are TEI's own failures, retryable on another deployment.
 */
export function mapTeiError(status: number, bodyText: string, retryAfterHeader: string | undefined, upstreamId: string): GatewayError {
  const message = teiErrorMessage(bodyText) ?? (bodyText.trim().slice(0, 200) || `status ${status}`);
  if (status === 400 || status === 413 || status === 422) {
    return new GatewayError('upstream_bad_request', message);
  }
  if (status === 401 || status === 403) {
    return new GatewayError('upstream_auth_failed', `Upstream ${upstreamId} refused the gateway's credential (status ${status}): ${message}`);
  }
  if (status === 429) {
    return new GatewayError('upstream_rate_limited', `Upstream ${upstreamId} is overloaded: ${message}`, {
      retryAfterSeconds: parseRetryAfter(retryAfterHeader) ?? 1,
    });
  }
  if (status === 408 || status === 504) {
    return new GatewayError('upstream_timeout', `Upstream ${upstreamId} timed out (status ${status}): ${message}`);
  }
  return new GatewayError('upstream_error', `Upstream ${upstreamId} failed with status ${status}: ${message}`);
}

function teiErrorMessage(bodyText: string): string | null {
  try {
    const body = JSON.parse(bodyText) as TeiErrorBody | null;
    if (typeof body === 'object' && body !== null && typeof body.error === 'string') return body.error;
  } catch {
    // Not JSON: the raw text is the message.
  }
  return null;
}
