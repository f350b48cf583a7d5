import { GatewayError } from '../../errors/index.js';
import type { ChatStreamEvent } from '../provider-adapter.js';
import type { EventReader } from '../shared/read-events.js';
import type { ServerSentEvent } from '../shared/server-sent-events.js';
import type { AnthropicStreamEvent, AnthropicUsage } from './anthropic-api.js';
import { mapAnthropicStreamError } from './map-anthropic-error.js';
import { mapAnthropicFinishReason, type OpenAIFinishReason } from './map-anthropic-finish-reason.js';
import { mapAnthropicUsage, toUsage } from './map-anthropic-usage.js';

interface ChunkDelta {
  role?: 'assistant';
  content?: string;
  tool_calls?: Array<{ index: number; id?: string; type?: 'function'; function: { name?: string; arguments: string } }>;
}

/**
 * Reads Anthropic's Messages event stream into OpenAI `chat.completion.chunk` events as they
 * arrive, until `message_stop`. Anthropic numbers content blocks (text, thinking, tool_use…)
 * together; OpenAI numbers tool calls alone, so each tool_use block gets the next tool call index.
 */
export class AnthropicChatEvents implements EventReader<ChatStreamEvent> {
  done = false;
  private id = '';
  private model = '';
  private readonly usage: AnthropicUsage = {};
  /** Anthropic content block index → OpenAI tool call index. */
  private readonly toolIndexes = new Map<number, number>();

  constructor(
    private readonly upstreamId: string,
    private readonly created: number = Math.floor(Date.now() / 1000),
  ) {}

  read({ data }: ServerSentEvent): ChatStreamEvent | undefined {
    const event = this.parse(data);
    switch (event.type) {
      case 'message_start': {
        this.id = event.message?.id ?? '';
        this.model = event.message?.model ?? '';
        this.addUsage(event.message?.usage);
        return this.chunk({ role: 'assistant', content: '' }, null, '');
      }
      case 'content_block_start': {
        const block = event.content_block;
        if (block?.type === 'text' && typeof block.text === 'string' && block.text !== '') {
          return this.chunk({ content: block.text }, null, block.text);
        } else if (block?.type === 'tool_use') {
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
        } else if (delta?.type === 'input_json_delta' && typeof delta.partial_json === 'string' && delta.partial_json !== '') {
          const index = this.toolIndexes.get(event.index ?? -1);
          if (index !== undefined) return this.chunk({ tool_calls: [{ index, function: { arguments: delta.partial_json } }] }, null, delta.partial_json);
        }
        // thinking_delta, signature_delta and citations have no place in an OpenAI chunk.
        break;
      }
      case 'message_delta': {
        // Usage in message_delta is cumulative: it replaces what message_start said.
        this.addUsage(event.usage);
        return this.chunk({}, mapAnthropicFinishReason(event.delta?.stop_reason), '');
      }
      case 'message_stop': {
        this.done = true;
        const usage = mapAnthropicUsage(this.usage);
        if (usage === null) return undefined;
        const data = JSON.stringify({ id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [], usage });
        return { data, usage: toUsage(usage), usageOnly: true, text: '' };
      }
      case 'error':
        throw mapAnthropicStreamError(event.error, this.upstreamId);
      default:
        // ping, content_block_stop, and event types Anthropic adds later (its versioning policy says to ignore them).
        break;
    }
    return undefined;
  }

  end(): undefined {
    throw new GatewayError('upstream_error', `Upstream ${this.upstreamId} closed the stream before message_stop.`);
  }

  private parse(data: string): AnthropicStreamEvent {
    try {
      const event = JSON.parse(data) as unknown;
      if (typeof event === 'object' && event !== null) return event as AnthropicStreamEvent;
    } catch {
      // Reported below.
    }
    throw new GatewayError('upstream_invalid_response', `Upstream ${this.upstreamId} sent a stream event that is not a JSON object.`);
  }

  private addUsage(usage: AnthropicUsage | null | undefined): void {
    if (usage === null || usage === undefined) return;
    for (const key of ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'] as const) {
      const value = usage[key];
      if (typeof value === 'number') this.usage[key] = value;
    }
  }

  private chunk(delta: ChunkDelta, finishReason: OpenAIFinishReason | null, text: string): ChatStreamEvent {
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
