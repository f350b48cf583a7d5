import { isObject } from '../../core/index.js';
import { GatewayError } from '../../errors/index.js';
import { readChatUsage } from '../openai-chat/chat-usage.js';
import { randomToolUseId } from './convert-chat-to-message.js';
import type { MessageObject, MessagesServerSentEvent, MessagesStopReason } from './messages-types.js';
import type { MessagesErrorObject } from './messages-error.js';
import { messagesUsageOf } from './messages-usage.js';
import { stopReasonOf } from './stop-reason.js';

export interface MessagesStreamContext {
  id: string;
  /** The model the events name: the gateway's public name. */
  model: string;
}

/** The content block open now: text, or the tool call of a chat tool-call index. */
type OpenBlock = { kind: 'text' } | { kind: 'tool'; toolIndex: number };

/**
 * A chat completions stream (its chunks, parsed) as a Messages stream, in Anthropic's order:
 * `message_start`, `ping`, then each content block as `content_block_start`, its deltas
 * (`text_delta`, `input_json_delta`) and `content_block_stop`, then `message_delta` (the stop
 * reason and the usage) and `message_stop`. Text and each tool call are blocks of their own, one
 * open at a time, as Anthropic sends them. A failure once the stream is under way ends it with an
 * `error` event, in the words `failure` gives it; without `failure` it is thrown.
 */
export class MessagesEventStream {
  private open: OpenBlock | null = null;
  private blockIndex = -1;
  /** Chat tool-call indexes whose block was opened, and closed since when it is not `open`. */
  private readonly toolsSeen = new Set<number>();
  private stopReason: MessagesStopReason | null = null;
  private usage: ReturnType<typeof readChatUsage> = null;

  constructor(
    private readonly context: MessagesStreamContext,
    private readonly failure?: (error: unknown) => MessagesErrorObject,
  ) {}

  async *events(chunks: AsyncIterable<unknown>): AsyncGenerator<MessagesServerSentEvent> {
    const start: MessageObject = {
      id: this.context.id,
      type: 'message',
      role: 'assistant',
      model: this.context.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: messagesUsageOf(null),
    };
    yield event('message_start', { type: 'message_start', message: start });
    yield event('ping', { type: 'ping' });
    try {
      for await (const chunk of chunks) yield* this.read(chunk);
    } catch (error) {
      if (this.failure === undefined) throw error;
      yield event('error', { type: 'error', error: this.failure(error) });
      return;
    }
    yield* this.close();
    yield event('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: this.stopReason ?? 'end_turn', stop_sequence: null },
      usage: messagesUsageOf(this.usage),
    });
    yield event('message_stop', { type: 'message_stop' });
  }

  private *read(chunk: unknown): Generator<MessagesServerSentEvent> {
    if (!isObject(chunk)) return;
    if (isObject(chunk['error']) && chunk['choices'] === undefined) {
      const message = chunk['error']['message'];
      throw new GatewayError('upstream_error', typeof message === 'string' ? message : 'The upstream failed while streaming.');
    }
    this.usage = readChatUsage(chunk['usage']) ?? this.usage;
    const choices = Array.isArray(chunk['choices']) ? (chunk['choices'] as unknown[]) : [];
    for (const choice of choices) {
      // The gateway never asks for n > 1; any other choice is not this message's.
      if (!isObject(choice) || (choice['index'] ?? 0) !== 0) continue;
      const delta = isObject(choice['delta']) ? choice['delta'] : {};
      for (const text of [delta['content'], delta['refusal']]) {
        if (typeof text === 'string' && text !== '') yield* this.text(text);
      }
      const calls = Array.isArray(delta['tool_calls']) ? (delta['tool_calls'] as unknown[]) : [];
      for (const [position, call] of calls.entries()) {
        if (isObject(call)) yield* this.toolCall(typeof call['index'] === 'number' ? call['index'] : position, call);
      }
      if (typeof choice['finish_reason'] === 'string') this.stopReason = stopReasonOf(choice['finish_reason']);
    }
  }

  private *text(text: string): Generator<MessagesServerSentEvent> {
    if (this.open?.kind !== 'text') {
      yield* this.close();
      yield* this.start({ kind: 'text' }, { type: 'text', text: '' });
    }
    yield event('content_block_delta', { type: 'content_block_delta', index: this.blockIndex, delta: { type: 'text_delta', text } });
  }

  private *toolCall(toolIndex: number, call: Record<string, unknown>): Generator<MessagesServerSentEvent> {
    const called = isObject(call['function']) ? call['function'] : {};
    if (this.open?.kind !== 'tool' || this.open.toolIndex !== toolIndex) {
      // Anthropic's blocks never interleave: pieces of a call whose block closed have nowhere to go.
      if (this.toolsSeen.has(toolIndex)) throw new GatewayError('upstream_invalid_response', 'The upstream interleaved the arguments of its tool calls.');
      this.toolsSeen.add(toolIndex);
      yield* this.close();
      const id = typeof call['id'] === 'string' && call['id'] !== '' ? call['id'] : randomToolUseId();
      const name = typeof called['name'] === 'string' ? called['name'] : '';
      yield* this.start({ kind: 'tool', toolIndex }, { type: 'tool_use', id, name, input: {} });
    }
    const pieces = called['arguments'];
    if (typeof pieces === 'string' && pieces !== '') {
      yield event('content_block_delta', { type: 'content_block_delta', index: this.blockIndex, delta: { type: 'input_json_delta', partial_json: pieces } });
    }
  }

  private *start(open: OpenBlock, block: Record<string, unknown>): Generator<MessagesServerSentEvent> {
    this.open = open;
    this.blockIndex++;
    yield event('content_block_start', { type: 'content_block_start', index: this.blockIndex, content_block: block });
  }

  private *close(): Generator<MessagesServerSentEvent> {
    if (this.open === null) return;
    this.open = null;
    yield event('content_block_stop', { type: 'content_block_stop', index: this.blockIndex });
  }
}

function event(name: string, data: object): MessagesServerSentEvent {
  return { event: name, data: JSON.stringify(data) };
}
