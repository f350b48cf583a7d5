import { GatewayError } from '../../errors/index.js';
import { parseRetryAfter } from '../../core/index.js';
import type { JinaErrorBody } from './jina-api.js';

/**
 * A Jina error response as a GatewayError. The caller's mistakes (400, 413, 422) keep Jina's
 * message; the credential's problems (401, 402 and 403 for an empty balance), rate limits and
 * Jina's own failures are retryable on another credential.
 */
export function mapJinaError(status: number, bodyText: string, retryAfterHeader: string | undefined, upstreamId: string): GatewayError {
  const message = jinaErrorMessage(bodyText) ?? (bodyText.trim().slice(0, 200) || `status ${status}`);
  if (status === 400 || status === 413 || status === 422) {
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

function jinaErrorMessage(bodyText: string): string | null {
  let body: JinaErrorBody | null;
  try {
    body = JSON.parse(bodyText) as JinaErrorBody | null;
  } catch {
    // Not JSON: the raw text is the message.
    return null;
  }
  if (typeof body !== 'object' || body === null) return null;
  const { detail } = body;
  if (typeof detail === 'string') return detail;
  // FastAPI's validation list: say which fields, the way the upstream did.
  if (Array.isArray(detail)) {
    const issues = detail.flatMap((issue: unknown) => {
      if (typeof issue !== 'object' || issue === null) return [];
      const { loc, msg } = issue as { loc?: unknown; msg?: unknown };
      if (typeof msg !== 'string') return [];
      return [Array.isArray(loc) ? `${loc.join('.')}: ${msg}` : msg];
    });
    return issues.length > 0 ? issues.join('; ') : null;
  }
  if (typeof detail === 'object' && detail !== null && typeof (detail as { message?: unknown }).message === 'string') {
    return (detail as { message: string }).message;
  }
  return typeof body.message === 'string' ? body.message : null;
}
