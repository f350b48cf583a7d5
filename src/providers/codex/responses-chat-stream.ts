import { randomUUID } from 'node:crypto';
import { GatewayError, type FailureClass, type UpstreamFailure } from '../../errors/index.js';
import type { ChatStreamEvent } from '../provider-adapter.js';
import { classifyTransport, failureError } from '../shared/classify-upstream-failure.js';
import { ServerSentEventDecoder } from '../shared/server-sent-events.js';
import { responsesUsage } from '../shared/responses-usage.js';
import { toChatUsage, type ChatUsage } from './map-responses-usage.js';
import type { ResponsesError, ResponsesFunctionCall, ResponsesOutputItem, ResponsesResponse, ResponsesStreamEvent } from './responses-api.js';

export type ChatFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

export interface ChatToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function: { name?: string; arguments: string };
}

export interface ChatDelta {
  role?: 'assistant';
  content?: string;
  refusal?: string;
  tool_calls?: ChatToolCallDelta[];
}

/** One `chat.completion.chunk`, as this file writes it. */
export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: Array<{ index: 0; delta: ChatDelta; logprobs: null; finish_reason: ChatFinishReason | null }>;
  usage?: ChatUsage;
}

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
 * Turns the backend's Responses event stream into `chat.completion.chunk` events as they arrive:
 * text deltas become content, each function call a tool call numbered in order, and
 * `response.completed` (or `response.incomplete`) a finish chunk followed by a usage-only chunk.
 *
 * No chunk is sent before the model's first output, not even the role chunk: a response that fails
 * right after `response.created` (a rate limit, an overload) then fails before the first chunk, so
 * the router can still try another credential instead of sending the client an in-band error.
 */
export async function* readResponsesAsChatStream(body: AsyncIterableIterator<Buffer>, context: ResponsesChatStreamContext): AsyncGenerator<ChatStreamEvent> {
  const converter = new ResponsesChatConverter(context);
  const decoder = new ServerSentEventDecoder(context.maxEventBytes);
  try {
    for await (const chunk of body) {
      for (const event of decoder.push(chunk)) {
        yield* converter.convert(event.data);
        if (converter.finished) return;
      }
    }
    for (const event of decoder.end()) {
      yield* converter.convert(event.data);
      if (converter.finished) return;
    }
    throw protocolFailure(context.upstreamId, 'the stream ended before response.completed');
  } catch (error) {
    throw classifyTransport(error, context.upstreamId);
  } finally {
    // Stops the upstream generating (and billing) when the client went away early.
    await body.return?.();
  }
}

interface ToolCallState {
  index: number;
  /** The arguments already sent, to send only the rest when the call's final item says more. */
  sent: string;
}

class ResponsesChatConverter {
  finished = false;
  private responseId: string | null = null;
  private responseCreated: number | null = null;
  /** Fixed by the first chunk: every chunk of a completion has the same id and timestamp. */
  private chunkId: string | null = null;
  private chunkCreated: number | null = null;
  /** Function calls by `item:<id>` and `output:<index>`: deltas name their item either way. */
  private readonly toolCalls = new Map<string, ToolCallState>();
  private toolCallCount = 0;
  /** Message items whose text arrived as deltas; the others' text is taken from their final item. */
  private readonly streamedMessages = new Set<string>();

  constructor(private readonly context: ResponsesChatStreamContext) {}

  *convert(data: string): Generator<ChatStreamEvent> {
    if (data === '[DONE]') return;
    const event = this.parse(data);
    switch (event.type) {
      case 'response.created':
      case 'response.in_progress':
        this.noteResponse(event.response);
        break;
      case 'response.output_text.delta':
        if (typeof event.item_id === 'string') this.streamedMessages.add(event.item_id);
        if (typeof event.delta === 'string' && event.delta !== '') yield* this.output({ content: event.delta }, event.delta);
        break;
      case 'response.refusal.delta':
        if (typeof event.item_id === 'string') this.streamedMessages.add(event.item_id);
        if (typeof event.delta === 'string' && event.delta !== '') yield* this.output({ refusal: event.delta }, event.delta);
        break;
      case 'response.output_item.added':
        if (isFunctionCall(event.item)) yield* this.startToolCall(event.item, event.output_index);
        break;
      case 'response.function_call_arguments.delta': {
        const call = this.toolCall(event.item_id, event.output_index);
        // A delta of a call whose start never came is caught up from the call's final item.
        if (call !== undefined && typeof event.delta === 'string' && event.delta !== '') yield* this.toolArguments(call, event.delta);
        break;
      }
      case 'response.output_item.done':
        yield* this.finishItem(event.item, event.output_index);
        break;
      case 'response.completed':
      case 'response.incomplete':
        yield* this.finish(event.type, event.response);
        break;
      case 'response.failed':
        throw streamFailure(event.response?.error, this.context.upstreamId, 'the response failed');
      case 'error':
        throw streamFailure(isObject(event.error) ? event.error : event, this.context.upstreamId, 'the stream reported an error');
      default:
        // Reasoning summaries, content part boundaries, `*.done` repeats of what the deltas said,
        // and event types added later: nothing a chat chunk carries.
        break;
    }
  }

  private parse(data: string): ResponsesStreamEvent {
    let event: unknown;
    try {
      event = JSON.parse(data);
    } catch {
      throw protocolFailure(this.context.upstreamId, 'a stream event is not JSON');
    }
    if (!isObject(event) || typeof event['type'] !== 'string') throw protocolFailure(this.context.upstreamId, 'a stream event is not a typed JSON object');
    return event as unknown as ResponsesStreamEvent;
  }

  private noteResponse(response: ResponsesResponse | undefined): void {
    if (typeof response?.id === 'string' && this.responseId === null) this.responseId = response.id;
    if (typeof response?.created_at === 'number' && this.responseCreated === null) this.responseCreated = response.created_at;
  }

  private *startToolCall(item: ResponsesFunctionCall, outputIndex: number | undefined): Generator<ChatStreamEvent> {
    if (this.toolCall(item.id, outputIndex) !== undefined) return;
    const call: ToolCallState = { index: this.toolCallCount++, sent: '' };
    if (typeof item.id === 'string') this.toolCalls.set(`item:${item.id}`, call);
    if (typeof outputIndex === 'number') this.toolCalls.set(`output:${outputIndex}`, call);
    const name = typeof item.name === 'string' ? item.name : '';
    const id = typeof item.call_id === 'string' ? item.call_id : (item.id ?? '');
    yield* this.output({ tool_calls: [{ index: call.index, id, type: 'function', function: { name, arguments: '' } }] }, name);
    if (typeof item.arguments === 'string' && item.arguments !== '') yield* this.toolArguments(call, item.arguments);
  }

  private *toolArguments(call: ToolCallState, delta: string): Generator<ChatStreamEvent> {
    call.sent += delta;
    yield* this.output({ tool_calls: [{ index: call.index, function: { arguments: delta } }] }, delta);
  }

  /** A finished item: what its deltas did not say (a call or message sent whole) is sent now. */
  private *finishItem(item: ResponsesOutputItem | undefined, outputIndex: number | undefined): Generator<ChatStreamEvent> {
    if (isFunctionCall(item)) {
      yield* this.startToolCall(item, outputIndex);
      const call = this.toolCall(item.id, outputIndex);
      const complete = item.arguments;
      if (call !== undefined && typeof complete === 'string' && complete.length > call.sent.length && complete.startsWith(call.sent)) {
        yield* this.toolArguments(call, complete.slice(call.sent.length));
      }
      return;
    }
    if (item?.type !== 'message' || !('content' in item) || !Array.isArray(item.content)) return;
    if (typeof item.id === 'string' && this.streamedMessages.has(item.id)) return;
    for (const part of item.content) {
      if (part.type === 'output_text' && typeof part.text === 'string' && part.text !== '') yield* this.output({ content: part.text }, part.text);
      else if (part.type === 'refusal' && typeof part.refusal === 'string' && part.refusal !== '') yield* this.output({ refusal: part.refusal }, part.refusal);
    }
  }

  private *finish(type: 'response.completed' | 'response.incomplete', response: ResponsesResponse | undefined): Generator<ChatStreamEvent> {
    this.noteResponse(response);
    this.finished = true;
    if (this.chunkId === null) yield this.chunk({ role: 'assistant', content: '' }, null, '');
    yield this.chunk({}, this.finishReason(type, response), '');
    const usage = toChatUsage(response?.usage);
    if (usage === null) return;
    const chunk: ChatCompletionChunk = { ...this.envelope(), choices: [], usage };
    yield { data: JSON.stringify(chunk), usage: responsesUsage(response?.usage), usageOnly: true, text: '' };
  }

  /**
   * An answer cut short by the output limit is `length`, by the content filter `content_filter`
   * (other reasons, none documented, are cut short too); a complete one with a function call is
   * `tool_calls`, as the caller must run them.
   */
  private finishReason(type: 'response.completed' | 'response.incomplete', response: ResponsesResponse | undefined): ChatFinishReason {
    if (type === 'response.incomplete' || response?.status === 'incomplete') {
      return response?.incomplete_details?.reason === 'content_filter' ? 'content_filter' : 'length';
    }
    return this.toolCallCount > 0 ? 'tool_calls' : 'stop';
  }

  private toolCall(itemId: string | undefined, outputIndex: number | undefined): ToolCallState | undefined {
    return (typeof itemId === 'string' ? this.toolCalls.get(`item:${itemId}`) : undefined) ?? (typeof outputIndex === 'number' ? this.toolCalls.get(`output:${outputIndex}`) : undefined);
  }

  /** A chunk of output, after the role chunk that opens every completion. */
  private *output(delta: ChatDelta, text: string): Generator<ChatStreamEvent> {
    if (this.chunkId === null) yield this.chunk({ role: 'assistant', content: '' }, null, '');
    yield this.chunk(delta, null, text);
  }

  private chunk(delta: ChatDelta, finishReason: ChatFinishReason | null, text: string): ChatStreamEvent {
    const chunk: ChatCompletionChunk = { ...this.envelope(), choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] };
    return { data: JSON.stringify(chunk), usage: null, usageOnly: false, text };
  }

  private envelope(): Pick<ChatCompletionChunk, 'id' | 'object' | 'created' | 'model'> {
    // A response whose id never came (no `response.created`) still needs one id for all its chunks.
    this.chunkId ??= `chatcmpl-${this.responseId ?? randomUUID().replaceAll('-', '')}`;
    this.chunkCreated ??= this.context.created ?? this.responseCreated ?? Math.floor(Date.now() / 1000);
    return { id: this.chunkId, object: 'chat.completion.chunk', created: this.chunkCreated, model: this.context.model };
  }
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
function streamFailure(error: ResponsesError | null | undefined, upstreamId: string, fallback: string): GatewayError {
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

function secondsUntilReset(error: ResponsesError | null | undefined): number | null {
  const resetsAt = error?.resets_at;
  if (typeof resetsAt === 'number' && Number.isFinite(resetsAt)) return Math.max(1, Math.ceil(resetsAt - Date.now() / 1000));
  const resetsIn = error?.resets_in_seconds;
  if (typeof resetsIn === 'number' && Number.isFinite(resetsIn)) return Math.max(1, Math.ceil(resetsIn));
  return null;
}

function protocolFailure(upstreamId: string, message: string): GatewayError {
  return failureError({ class: 'protocol', status: null, retryAfterSeconds: null, rateLimitHeaders: {}, credentialId: upstreamId, message });
}

function isFunctionCall(item: ResponsesOutputItem | undefined): item is ResponsesFunctionCall {
  return item?.type === 'function_call';
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
