import { GatewayError } from '../../errors/index.js';
import { parseRetryAfter } from '../../core/index.js';
import type { GeminiErrorBody, GeminiErrorObject } from './gemini-api.js';

const ERROR_INFO_TYPE = 'type.googleapis.com/google.rpc.ErrorInfo';
const RETRY_INFO_TYPE = 'type.googleapis.com/google.rpc.RetryInfo';
/** ErrorInfo reasons that say the key itself is bad, although Gemini answers them with 400. */
const CREDENTIAL_REASONS = new Set(['API_KEY_INVALID', 'API_KEY_EXPIRED', 'API_KEY_SERVICE_BLOCKED']);

/**
 * A Gemini error response (`{"error": {code, message, status, details}}`) as a GatewayError.
 * The caller's mistakes keep their 400; problems of our credential (a bad key is a 400 with an
 * ErrorInfo reason on Gemini, a region or billing refusal is 400 FAILED_PRECONDITION), its quota
 * (429) and Google's failures (5xx) are retryable on another credential.
 */
export function mapGeminiError(status: number, bodyText: string, retryAfterHeader: string | undefined, upstreamId: string): GatewayError {
  const upstreamError = parseGeminiError(bodyText);
  const message = upstreamError?.message?.trim() || bodyText.trim().slice(0, 200) || `status ${status}`;
  const reasons = new Set((upstreamError?.details ?? []).filter((detail) => detail['@type'] === ERROR_INFO_TYPE).map((detail) => detail.reason));
  if ([...reasons].some((reason) => reason !== undefined && CREDENTIAL_REASONS.has(reason))) {
    return new GatewayError('upstream_auth_failed', `Upstream ${upstreamId} refused the gateway's credential: ${message}`);
  }
  if (status === 400 && upstreamError?.status === 'FAILED_PRECONDITION') {
    return new GatewayError('upstream_error', `Upstream ${upstreamId} cannot serve this credential: ${message}`);
  }
  if (status === 400 || status === 413 || status === 422) {
    return new GatewayError('upstream_bad_request', message);
  }
  if (status === 401 || status === 403) {
    return new GatewayError('upstream_auth_failed', `Upstream ${upstreamId} refused the gateway's credential: ${message}`);
  }
  if (status === 404) {
    return new GatewayError('upstream_error', `Upstream ${upstreamId} answered 404: ${message}`);
  }
  if (status === 429) {
    return new GatewayError('upstream_rate_limited', `Upstream ${upstreamId} is rate limiting: ${message}`, {
      retryAfterSeconds: parseRetryAfter(retryAfterHeader) ?? retryDelaySeconds(upstreamError) ?? 1,
    });
  }
  if (status === 408 || status === 504) {
    return new GatewayError('upstream_timeout', `Upstream ${upstreamId} timed out (status ${status}): ${message}`);
  }
  return new GatewayError('upstream_error', `Upstream ${upstreamId} failed with status ${status}: ${message}`);
}

/** An `error` object Gemini sent inside a stream that had already started. */
export function mapGeminiStreamError(error: GeminiErrorObject, upstreamId: string): GatewayError {
  const code = typeof error.code === 'number' && error.code >= 400 && error.code < 600 ? error.code : 500;
  const mapped = mapGeminiError(code, JSON.stringify({ error }), undefined, upstreamId);
  return new GatewayError(mapped.code, `Mid-stream: ${mapped.message}`, mapped.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: mapped.retryAfterSeconds });
}

/** The error object of a Gemini error body; Google sometimes wraps it in a one-element array. */
export function parseGeminiError(bodyText: string): GeminiErrorObject | null {
  try {
    const parsed = JSON.parse(bodyText) as GeminiErrorBody | GeminiErrorBody[];
    const body = Array.isArray(parsed) ? parsed[0] : parsed;
    if (typeof body?.error === 'object' && body.error !== null) return body.error;
  } catch {
    // Not JSON: the caller uses the raw text.
  }
  return null;
}

/** RetryInfo's `retryDelay` is a protobuf Duration in JSON: seconds with an `s` suffix ("34.4s"). */
function retryDelaySeconds(error: GeminiErrorObject | null): number | undefined {
  const delay = error?.details?.find((detail) => detail['@type'] === RETRY_INFO_TYPE)?.retryDelay;
  const match = typeof delay === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(delay) : null;
  return match?.[1] === undefined ? undefined : Math.ceil(Number(match[1]));
}
