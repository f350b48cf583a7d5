import type { ChatFinishReason, ChatStreamEvent } from '../openai-chat/chat-types.js';
import type { AnthropicErrorObject, AnthropicStreamEvent, AnthropicUsage } from './messages-types.js';
import { anthropicUsage, mapAnthropicUsage, mergeAnthropicUsage } from './messages-usage.js';
import { mapAnthropicFinishReason } from './stop-reason.js';

interface ChunkDelta {
  role?: 'assistant';
  content?: string;
  tool_calls?: Array<{ index: number; id?: string; type?: 'function'; function: { name?: string; arguments: string } }>;
}

/**
 * Anthropic's Messages stream events, parsed, as OpenAI `chat.completion.chunk` events as they
 * arrive, until `message_stop`. Anthropic numbers content blocks (text, thinking, tool_use…)
 * together; OpenAI numbers tool calls alone, so each tool_use block gets the next tool call index.
 * An `error` event is thrown as the error the caller makes of it (`failure`): classifying an
 * upstream's failure is the provider's.
 */
export class MessageChatChunks {
  done = false;
  private id = '';
  private model = '';
  private readonly usage: AnthropicUsage = {};
  /** Anthropic content block index → OpenAI tool call index. */
  private readonly toolIndexes = new Map<number, number>();

  constructor(
    private readonly failure: (error: AnthropicErrorObject | null | undefined) => Error,
    private readonly created: number = Math.floor(Date.now() / 1000),
  ) {}

  read(event: AnthropicStreamEvent): ChatStreamEvent | undefined {
    switch (event.type) {
      case 'message_start': {
        this.id = event.message?.id ?? '';
        this.model = event.message?.model ?? '';
        mergeAnthropicUsage(this.usage, event.message?.usage);
        return this.chunk({ role: 'assistant', content: '' }, null, '');
      }
      case 'content_block_start': {
        const block = event.content_block;
        if (block?.type === 'text' && typeof block.text === 'string' && block.text !== '') {
          return this.chunk({ content: block.text }, null, block.text);
        }
        if (block?.type === 'tool_use') {
          const index = this.toolIndexes.size;
          this.toolIndexes.set(event.index ?? -1, index);
          const name = block.name ?? '';
          return this.chunk({ tool_calls: [{ index, id: block.id ?? '', type: 'function', function: { name, arguments: '' } }] }, null, name);
        }
        break;
      }
      case 'content_block_delta': {
        const delta = event.delta;
        if (delta?.type === 'text_delta' && typeof delta.text === 'string' && delta.text !== '') {
          return this.chunk({ content: delta.text }, null, delta.text);
        }
        if (delta?.type === 'input_json_delta' && typeof delta.partial_json === 'string' && delta.partial_json !== '') {
          const index = this.toolIndexes.get(event.index ?? -1);
          if (index !== undefined) return this.chunk({ tool_calls: [{ index, function: { arguments: delta.partial_json } }] }, null, delta.partial_json);
        }
        // thinking_delta, signature_delta and citations have no place in an OpenAI chunk.
        break;
      }
      case 'message_delta': {
        // Usage in message_delta is cumulative: it replaces what message_start said.
        mergeAnthropicUsage(this.usage, event.usage);
        return this.chunk({}, mapAnthropicFinishReason(event.delta?.stop_reason), '');
      }
      case 'message_stop': {
        this.done = true;
        const usage = mapAnthropicUsage(this.usage);
        if (usage === null) return undefined;
        const data = JSON.stringify({ id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [], usage });
        return { data, usage: anthropicUsage(this.usage), usageOnly: true, text: '' };
      }
      case 'error':
        throw this.failure(event.error);
      default:
        // ping, content_block_stop, and event types Anthropic adds later (its versioning policy says to ignore them).
        break;
    }
    return undefined;
  }

  private chunk(delta: ChunkDelta, finishReason: ChatFinishReason | null, text: string): ChatStreamEvent {
    const data = JSON.stringify({
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    });
    return { data, usage: null, usageOnly: false, text };
  }
}
