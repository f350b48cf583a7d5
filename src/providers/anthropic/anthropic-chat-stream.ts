import { GatewayError } from '../../errors/index.js';
import { MessageChatChunks } from '../../protocols/anthropic-messages/message-chat-chunks.js';
import type { AnthropicStreamEvent } from '../../protocols/anthropic-messages/messages-types.js';
import type { ChatStreamEvent } from '../provider-adapter.js';
import type { EventReader } from '../shared/read-events.js';
import type { ServerSentEvent } from '../shared/server-sent-events.js';
import { mapAnthropicStreamError } from './map-anthropic-error.js';

/**
 * Anthropic's Messages event stream as OpenAI `chat.completion.chunk` events: each event parsed
 * here, converted by the protocol (message-chat-chunks.ts), an `error` event classified as the
 * status it stands for (map-anthropic-error.ts).
 */
export class AnthropicChatEvents implements EventReader<ChatStreamEvent> {
  private readonly chunks: MessageChatChunks;

  constructor(
    private readonly upstreamId: string,
    created?: number,
  ) {
    this.chunks = new MessageChatChunks((error) => mapAnthropicStreamError(error, upstreamId), created);
  }

  get done(): boolean {
    return this.chunks.done;
  }

  read({ data }: ServerSentEvent): ChatStreamEvent | undefined {
    return this.chunks.read(this.parse(data));
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
}
