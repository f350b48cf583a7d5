import { GatewayError } from '../../errors/index.js';
import { classifyAnswer, type ErrorDialect } from '../shared/classify-upstream-failure.js';
import type { GeminiErrorBody, GeminiErrorObject } from './gemini-api.js';

const ERROR_INFO_TYPE = 'type.googleapis.com/google.rpc.ErrorInfo';
const RETRY_INFO_TYPE = 'type.googleapis.com/google.rpc.RetryInfo';
/** ErrorInfo reasons that say the key itself is bad, although Gemini answers them with 400. */
const CREDENTIAL_REASONS = new Set(['API_KEY_INVALID', 'API_KEY_EXPIRED', 'API_KEY_SERVICE_BLOCKED']);

/**
 * What a Gemini error body says (`{"error": {code, message, status, details}}`). A bad key is a 400
 * with an ErrorInfo reason on Gemini (the credential's problem, not the caller's); a region or
 * billing refusal is 400 FAILED_PRECONDITION, which another credential may not share; RetryInfo
 * carries the delay of a 429.
 */
export const geminiErrorDialect: ErrorDialect = {
  read(status, bodyText) {
    const error = parseGeminiError(bodyText);
    if (error === null) return null;
    const reasons = (error.details ?? []).filter((detail) => detail['@type'] === ERROR_INFO_TYPE).map((detail) => detail.reason);
    const refusedKey = reasons.some((reason) => reason !== undefined && CREDENTIAL_REASONS.has(reason));
    return {
      message: error.message,
      class: refusedKey ? 'auth' : status === 400 && error.status === 'FAILED_PRECONDITION' ? 'server' : undefined,
      retryAfterSeconds: retryDelaySeconds(error),
    };
  },
};

/** An `error` object Gemini sent inside a stream that had already started. */
export function mapGeminiStreamError(error: GeminiErrorObject, upstreamId: string): GatewayError {
  const code = typeof error.code === 'number' && error.code >= 400 && error.code < 600 ? error.code : 500;
  const mapped = classifyAnswer(code, undefined, JSON.stringify({ error }), upstreamId, geminiErrorDialect);
  return new GatewayError(mapped.code, `Mid-stream: ${mapped.message}`, {
    ...(mapped.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: mapped.retryAfterSeconds }),
    ...(mapped.upstream === undefined ? {} : { upstream: { ...mapped.upstream, status: null } }),
  });
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
