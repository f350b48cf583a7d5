import type { FailureClass, GatewayError, UpstreamFailure } from '../../errors/index.js';
import type { ResponseError } from '../../protocols/openai-responses/responses-types.js';
import { failureError } from '../shared/classify-upstream-failure.js';

/**
 * A failure the backend reported in the stream (`response.failed`, `error`), classified like an
 * HTTP answer would be (shared/classify-upstream-failure.ts), from its error code:
 * - `rate_limit_exceeded`: a rate limit; its message says how long to wait ("try again in 1.2s").
 * - `usage_limit_reached`, `insufficient_quota`: the plan's usage is spent, until `resets_at` /
 *   `resets_in_seconds` when given (the same body map-codex-error.ts reads off a 429).
 * - `usage_not_included`: the account's plan does not include Codex: the credential is unusable.
 * - `server_is_overloaded`, `slow_down`: capacity, another credential may be served.
 * - `context_length_exceeded`, `invalid_prompt`, an `invalid_request_error`: the caller's request.
 * - anything else (`server_error`…): the upstream failed.
 * Codex CLI (codex-rs/codex-api/src/sse/responses.rs) reads the same codes.
 */
export function streamFailure(error: ResponseError | null | undefined, upstreamId: string, fallback: string): GatewayError {
  const code = typeof error?.code === 'string' ? error.code : null;
  const type = typeof error?.type === 'string' && error.type !== 'error' ? error.type : null;
  const reason = code ?? type;
  const message = (typeof error?.message === 'string' ? error.message.trim() : '') || reason || fallback;
  const failureClass = classOf(reason, type);
  const failure: UpstreamFailure = {
    class: failureClass,
    status: null,
    retryAfterSeconds: failureClass === 'rate_limit' ? waitFromMessage(message) : failureClass === 'quota' ? secondsUntilReset(error) : null,
    rateLimitHeaders: {},
    credentialId: upstreamId,
    message,
  };
  return failureError(failure, typeof error?.param === 'string' ? error.param : null);
}

const CLASS_OF_CODE: Readonly<Record<string, FailureClass>> = {
  rate_limit_exceeded: 'rate_limit',
  usage_limit_reached: 'quota',
  usage_limit_exceeded: 'quota',
  insufficient_quota: 'quota',
  usage_not_included: 'auth',
  server_is_overloaded: 'overloaded',
  slow_down: 'overloaded',
  context_length_exceeded: 'caller',
  invalid_prompt: 'caller',
};

function classOf(reason: string | null, type: string | null): FailureClass {
  const known = reason === null ? undefined : CLASS_OF_CODE[reason];
  if (known !== undefined) return known;
  return type === 'invalid_request_error' ? 'caller' : 'server';
}

const TRY_AGAIN = /try again in\s*(\d+(?:\.\d+)?)\s*(ms|s|seconds?)\b/i;

function waitFromMessage(message: string): number | null {
  const match = TRY_AGAIN.exec(message);
  if (match === null) return null;
  const amount = Number(match[1]);
  const seconds = match[2]?.toLowerCase() === 'ms' ? amount / 1000 : amount;
  return Math.max(1, Math.ceil(seconds));
}

function secondsUntilReset(error: ResponseError | null | undefined): number | null {
  const resetsAt = error?.resets_at;
  if (typeof resetsAt === 'number' && Number.isFinite(resetsAt)) return Math.max(1, Math.ceil(resetsAt - Date.now() / 1000));
  const resetsIn = error?.resets_in_seconds;
  if (typeof resetsIn === 'number' && Number.isFinite(resetsIn)) return Math.max(1, Math.ceil(resetsIn));
  return null;
}

export function protocolFailure(upstreamId: string, message: string): GatewayError {
  return failureError({ class: 'protocol', status: null, retryAfterSeconds: null, rateLimitHeaders: {}, credentialId: upstreamId, message });
}
