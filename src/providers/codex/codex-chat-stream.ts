import type { GatewayError, FailureClass, UpstreamFailure } from '../../errors/index.js';
import { ResponsesChatConverter } from '../../protocols/openai-responses/responses-chat-chunks.js';
import type { ResponseError, ResponseStreamEvent } from '../../protocols/openai-responses/responses-types.js';
import type { ChatStreamEvent } from '../provider-adapter.js';
import { classifyTransport, failureError } from '../shared/classify-upstream-failure.js';
import { ServerSentEventDecoder } from '../shared/server-sent-events.js';

export interface ResponsesChatStreamContext {
  /** The credential's id, for errors and the failure the router reads. */
  upstreamId: string;
  /** The chunks' `model`. */
  model: string;
  maxEventBytes?: number;
  /** The chunks' `created` (unix seconds); else the response's own, else now. */
  created?: number;
}

/**
 * The backend's Responses event stream as `chat.completion.chunk` events, as they arrive (the
 * conversion is the protocol's, protocols/openai-responses/responses-chat-chunks.ts).
 */
export async function* readResponsesAsChatStream(body: AsyncIterableIterator<Buffer>, context: ResponsesChatStreamContext): AsyncGenerator<ChatStreamEvent> {
  const converter = new ResponsesChatConverter({
    model: context.model,
    ...(context.created === undefined ? {} : { created: context.created }),
    failed: (error, fallback) => streamFailure(error, context.upstreamId, fallback),
  });
  for await (const event of readResponseEvents(body, context)) {
    yield* converter.convert(event);
    if (converter.finished) return;
  }
}

/**
 * The backend's Responses events, parsed, up to the one that ends the response
 * (`response.completed` or `.incomplete`). A failure it reports in the stream (`response.failed`,
 * `error`) is thrown classified (streamFailure), as is a stream cut before its end; the body is
 * closed when the reader stops, which stops the upstream generating (and billing).
 */
export async function* readResponseEvents(body: AsyncIterableIterator<Buffer>, context: Pick<ResponsesChatStreamContext, 'upstreamId' | 'maxEventBytes'>): AsyncGenerator<ResponseStreamEvent> {
  const decoder = new ServerSentEventDecoder(context.maxEventBytes);
  try {
    for await (const chunk of body) {
      for (const event of decoder.push(chunk)) {
        if (event.data === '[DONE]') continue;
        const parsed = parseEvent(event.data, context.upstreamId);
        failOn(parsed, context.upstreamId);
        yield parsed;
        if (parsed.type === 'response.completed' || parsed.type === 'response.incomplete') return;
      }
    }
    for (const event of decoder.end()) {
      if (event.data === '[DONE]') continue;
      const parsed = parseEvent(event.data, context.upstreamId);
      failOn(parsed, context.upstreamId);
      yield parsed;
      if (parsed.type === 'response.completed' || parsed.type === 'response.incomplete') return;
    }
    throw protocolFailure(context.upstreamId, 'the stream ended before response.completed');
  } catch (error) {
    throw classifyTransport(error, context.upstreamId);
  } finally {
    await body.return?.();
  }
}

function failOn(event: ResponseStreamEvent, upstreamId: string): void {
  if (event.type === 'response.failed') throw streamFailure(event.response?.error, upstreamId, 'the response failed');
  if (event.type === 'error') throw streamFailure(isObject(event.error) ? event.error : event, upstreamId, 'the stream reported an error');
}

/** One event's JSON, a typed object; what else the event says is checked as it is read. */
function parseEvent(data: string, upstreamId: string): ResponseStreamEvent {
  let event: unknown;
  try {
    event = JSON.parse(data);
  } catch {
    throw protocolFailure(upstreamId, 'a stream event is not JSON');
  }
  if (!isObject(event) || typeof event['type'] !== 'string') throw protocolFailure(upstreamId, 'a stream event is not a typed JSON object');
  return event as unknown as ResponseStreamEvent;
}

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
function streamFailure(error: ResponseError | null | undefined, upstreamId: string, fallback: string): GatewayError {
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

function protocolFailure(upstreamId: string, message: string): GatewayError {
  return failureError({ class: 'protocol', status: null, retryAfterSeconds: null, rateLimitHeaders: {}, credentialId: upstreamId, message });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
