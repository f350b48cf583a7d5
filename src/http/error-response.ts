import { maskSecrets } from '../core/index.js';
import { GatewayError, isDatabaseOutage, isGatewayError, type ErrorCode } from '../errors/index.js';
import type { RequestRecord } from '../usage/index.js';
import { bodyErrors } from './body-errors.js';
import { ACCEPTED_REQUEST_ENCODINGS } from './request-body-encoding.js';

/** The body every error is sent with, in the shape the OpenAI SDKs parse; 422 adds `detail`. */
export interface ErrorBody {
  error: { message: string; type: string; code: string; param: string | null; resets_at?: number; resets_in_seconds?: number };
  detail?: GatewayError['detail'];
}

export { bodyErrors } from './body-errors.js';

const FASTIFY_ERRORS: Record<string, (error: Error) => GatewayError> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: bodyErrors.unsupportedMediaType,
  FST_ERR_CTP_BODY_TOO_LARGE: bodyErrors.tooLarge,
  FST_ERR_CTP_EMPTY_JSON_BODY: bodyErrors.empty,
  FST_ERR_CTP_INVALID_JSON_BODY: (error) => bodyErrors.notJson(error.message),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new GatewayError('invalid_body', 'Content-Length does not match the body.'),
};

/**
 * The one place an error becomes what the client sees. GatewayErrors keep their code; framework
 * errors are translated; anything else is a bug and says nothing about internals.
 */
export function toGatewayError(error: unknown): GatewayError {
  if (isGatewayError(error)) return error;
  if (error instanceof Error) {
    const { code, statusCode } = error as Error & { code?: string; statusCode?: number };
    const translate = code === undefined ? undefined : FASTIFY_ERRORS[code];
    if (translate !== undefined) return translate(error);
    // JSON.parse errors from the body parser carry status 400 and no fastify code.
    if (error instanceof SyntaxError && statusCode === 400) {
      return bodyErrors.notJson(error.message);
    }
    if (code?.startsWith('FST_') === true && statusCode !== undefined && statusCode >= 400 && statusCode < 500) {
      return new GatewayError('invalid_body', error.message);
    }
  }
  // An outage, not a bug: said as such, and not logged per request (the stores log it, throttled).
  if (isDatabaseOutage(error)) {
    return new GatewayError('database_unavailable', "The gateway's database is unavailable; retry shortly, or tell the gateway's operator if it lasts.", {
      cause: error,
    });
  }
  return new GatewayError('internal_error', 'The gateway failed to handle this request; quote the request id when reporting it.', {
    cause: error,
  });
}

/** Longest message an error body carries: an upstream's or a parser's message can quote anything. */
export const MAX_ERROR_MESSAGE_LENGTH = 1024;

export function errorBody(error: GatewayError): ErrorBody {
  const body: ErrorBody = { error: { message: cappedMessage(error), type: error.type, code: error.code, param: error.param } };
  if (error.detail !== undefined) body.detail = error.detail;
  return body;
}

/**
 * The body of an error on the native endpoint: the same envelope, except that every credential
 * out of its usage limit is said the way Codex CLI understands it (`type: usage_limit_reached`
 * with `resets_at`, unix seconds), so that it tells its user when to try again instead of
 * retrying. `code` stays the gateway's own.
 */
export function nativeErrorBody(error: GatewayError, now: number = Date.now()): ErrorBody {
  const body = errorBody(error);
  // A spent quota on the last account tried (the attempts ran out before the pool did) says the
  // same, and so does the caller's own quota: Codex then tells its user when to try again.
  if (error.code !== 'upstream_quota_exhausted' && error.code !== 'quota_exceeded' && error.upstream?.class !== 'quota') return body;
  const resetsInSeconds = error.retryAfterSeconds ?? 60;
  return {
    ...body,
    error: { ...body.error, type: 'usage_limit_reached', resets_at: Math.ceil(now / 1_000) + resetsInSeconds, resets_in_seconds: resetsInSeconds },
  };
}

/** How a family of routes says an error: its status and body. OpenAI's shape is every route's but those that speak another protocol. */
export interface ErrorWire {
  status(error: GatewayError): number;
  body(error: GatewayError): object;
}

export const OPENAI_ERROR_WIRE: ErrorWire = { status: (error) => error.status, body: errorBody };

/** The native endpoint's: OpenAI's shape, a spent quota said as Codex CLI understands it. */
export const NATIVE_ERROR_WIRE: ErrorWire = { status: (error) => error.status, body: (error) => nativeErrorBody(error) };

/** An error's message as a body carries it: an upstream's or a parser's message can quote anything. */
export function cappedMessage(error: GatewayError): string {
  return error.message.length <= MAX_ERROR_MESSAGE_LENGTH ? error.message : `${error.message.slice(0, MAX_ERROR_MESSAGE_LENGTH)}…`;
}

const NEVER_SECONDS = 86_400;

/** Headers an error response carries besides the body; 429 always says when to retry. */
export function errorHeaders(error: GatewayError): Record<string, string> {
  if (error.code === 'unsupported_content_encoding') return { 'accept-encoding': ACCEPTED_REQUEST_ENCODINGS };
  // The SDKs retry a 429 by themselves, within a minute: a spent quota is not worth it.
  if (error.code === 'quota_exceeded') return { 'retry-after': String(error.retryAfterSeconds ?? NEVER_SECONDS), 'x-should-retry': 'false' };
  if (error.retryAfterSeconds !== undefined) return { 'retry-after': String(error.retryAfterSeconds) };
  if (error.status === 429 || error.status === 503) return { 'retry-after': '1' };
  return {};
}

/** What settling an error needs of a logger: Fastify's request logger and pino's both fit. */
export interface ErrorLogger {
  error(object: object, message: string): void;
}

/**
 * What a caller is told of an upstream's failure: what happened, in words it can act on, and the
 * request id to quote. Never which credential, which URL, or the HTTP client's own codes: those
 * are in the request's log lines (see observability/access-log.ts). An upstream's refusal of the
 * caller's own request (`upstream_bad_request`) keeps the upstream's explanation.
 */
const CALLER_MESSAGES: Partial<Record<ErrorCode, (requestId: string) => string>> = {
  upstream_error: (id) => `The model's upstream provider failed or could not be reached. Retry, or quote request id ${id} to the gateway's operator.`,
  upstream_auth_failed: (id) => `The model's upstream provider refused the gateway's credentials; the gateway's operator must fix them (request id ${id}).`,
  upstream_invalid_response: (id) =>
    `The model's upstream provider sent an answer the gateway could not use. Retry, or quote request id ${id} to the gateway's operator.`,
  upstream_rate_limited: (id) => `The model's upstream providers are rate limiting the gateway; retry after the Retry-After delay (request id ${id}).`,
  upstream_quota_exhausted: (id) =>
    `Every upstream credential of this model is out of quota; retry after the Retry-After delay or ask the gateway's operator (request id ${id}).`,
  upstream_timeout: (id) => `The model's upstream provider did not answer in time. Retry, or quote request id ${id} to the gateway's operator.`,
};

/**
 * The error as a caller may see it: an upstream failure's message replaced by CALLER_MESSAGES (the
 * original stays its cause); any other message (an upstream's refusal of the caller's request
 * quotes it) with what looks like a key or a token masked, as it is for operators.
 */
export function forCaller(error: GatewayError, requestId: string): GatewayError {
  const message = CALLER_MESSAGES[error.code];
  if (message === undefined) {
    const masked = maskSecrets(error.message);
    if (masked === error.message) return error;
    return new GatewayError(error.code, masked, {
      retryable: error.retryable,
      cause: error,
      param: error.param,
      ...(error.detail === undefined ? {} : { detail: error.detail }),
      ...(error.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: error.retryAfterSeconds }),
      ...(error.upstream === undefined ? {} : { upstream: error.upstream }),
    });
  }
  return new GatewayError(error.code, message(requestId), {
    retryable: error.retryable,
    cause: error,
    ...(error.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: error.retryAfterSeconds }),
    // Kept for the wire mapping (a spent quota's body on the native endpoint); never sent itself.
    ...(error.upstream === undefined ? {} : { upstream: error.upstream }),
  });
}

/**
 * What a streamed answer's route tells the caller of a failure once the stream is under way: the
 * error noted on the record and logged here, said in words that name no credential (`forCaller`).
 */
export function midStreamFailure(record: RequestRecord, logger: { warn(object: object, message: string): void }): (error: unknown) => GatewayError {
  return (error) => {
    const gatewayError = toGatewayError(error);
    record.errorCode ??= gatewayError.code;
    logger.warn({ err: error, requestId: record.id, clientRequestId: record.clientRequestId }, 'stream failed after the first byte');
    return forCaller(gatewayError, record.publicId);
  };
}

/**
 * An error that ends a request, whichever server layer caught it: translated, logged when it is a
 * bug, and noted on the request-log row. Returns what the client is told.
 */
export function settleError(
  rawError: unknown,
  record: RequestRecord | null,
  logger: ErrorLogger,
  requestId: string,
  clientRequestId: string | null,
): GatewayError {
  const error = forCaller(toGatewayError(rawError), clientRequestId ?? requestId);
  if (error.code === 'internal_error') logger.error({ err: rawError, requestId, ...(clientRequestId === null ? {} : { clientRequestId }) }, 'unhandled error');
  if (record !== null) {
    // The first error is the cause: one that follows it (the route failing after a body timeout or
    // a shutdown answered it) must not rename it.
    record.errorCode ??= error.code;
    record.markFirstByte();
  }
  return error;
}
