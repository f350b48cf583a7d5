import { randomUUID } from 'node:crypto';
import { isObject } from '../../core/index.js';
import type { ChatCompletionChunk, ChatDelta, ChatFinishReason, ChatStreamEvent } from '../openai-chat/chat-types.js';
import { toChatUsage } from './map-responses-usage.js';
import type { ResponseError, ResponseFunctionCallItem, ResponseStreamEvent, StreamedOutputItem, StreamedResponse } from './responses-types.js';
import { responsesUsage } from './responses-usage.js';

export interface ResponsesChatStreamContext {
  /** The chunks' `model`. */
  model: string;
  /** The chunks' `created` (unix seconds); else the response's own, else now. */
  created?: number;
  /**
   * The error to throw for a failure the upstream reported in the stream (`response.failed`,
   * `error`): how it is classified is the provider's dialect.
   */
  failed(error: ResponseError | null | undefined, fallback: string): Error;
}

/**
 * Turns a Responses event stream into `chat.completion.chunk` events as they arrive: text deltas
 * become content, each function call a tool call numbered in order, and `response.completed` (or
 * `response.incomplete`) a finish chunk followed by a usage-only chunk. The provider reads the
 * events off the wire and hands each one, parsed, to `convert`; `finished` says when to stop.
 *
 * No chunk is sent before the model's first output, not even the role chunk: a response that fails
 * right after `response.created` (a rate limit, an overload) then fails before the first chunk, so
 * the router can still try another credential instead of sending the client an in-band error.
 */
interface ToolCallState {
  index: number;
  /** The arguments already sent, to send only the rest when the call's final item says more. */
  sent: string;
}

export class ResponsesChatConverter {
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

  *convert(event: ResponseStreamEvent): Generator<ChatStreamEvent> {
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
        throw this.context.failed(event.response?.error, 'the response failed');
      case 'error':
        throw this.context.failed(isObject(event.error) ? event.error : event, 'the stream reported an error');
      default:
        // Reasoning summaries, content part boundaries, `*.done` repeats of what the deltas said,
        // and event types added later: nothing a chat chunk carries.
        break;
    }
  }

  private noteResponse(response: StreamedResponse | undefined): void {
    if (typeof response?.id === 'string' && this.responseId === null) this.responseId = response.id;
    if (typeof response?.created_at === 'number' && this.responseCreated === null) this.responseCreated = response.created_at;
  }

  private *startToolCall(item: ResponseFunctionCallItem, outputIndex: number | undefined): Generator<ChatStreamEvent> {
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
  private *finishItem(item: StreamedOutputItem | undefined, outputIndex: number | undefined): Generator<ChatStreamEvent> {
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

  private *finish(type: 'response.completed' | 'response.incomplete', response: StreamedResponse | undefined): Generator<ChatStreamEvent> {
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
  private finishReason(type: 'response.completed' | 'response.incomplete', response: StreamedResponse | undefined): ChatFinishReason {
    if (type === 'response.incomplete' || response?.status === 'incomplete') {
      return response?.incomplete_details?.reason === 'content_filter' ? 'content_filter' : 'length';
    }
    return this.toolCallCount > 0 ? 'tool_calls' : 'stop';
  }

  private toolCall(itemId: string | undefined, outputIndex: number | undefined): ToolCallState | undefined {
    return (
      (typeof itemId === 'string' ? this.toolCalls.get(`item:${itemId}`) : undefined) ??
      (typeof outputIndex === 'number' ? this.toolCalls.get(`output:${outputIndex}`) : undefined)
    );
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

function isFunctionCall(item: StreamedOutputItem | undefined): item is ResponseFunctionCallItem {
  return item?.type === 'function_call';
}
