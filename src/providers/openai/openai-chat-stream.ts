import { isObject } from '../../core/index.js';
import { GatewayError } from '../../errors/index.js';
import type { ChatStreamEvent } from '../provider-adapter.js';
import type { EventReader } from '../shared/read-events.js';
import type { ServerSentEvent } from '../shared/server-sent-events.js';
import type { OpenAIChatCompletionChunk } from './openai-api.js';
import { mapOpenAIStreamError } from './map-openai-error.js';
import { readChatUsage } from '../../protocols/openai-chat/chat-usage.js';
import { generatedText } from './generated-text.js';

/**
 * Reads an OpenAI-compatible chat stream into chunk events as they arrive, until `[DONE]`. Each
 * chunk's JSON is forwarded as the upstream wrote it; it is parsed only to read usage and
 * generated text. A stream that ends without `[DONE]` ends there (older servers omit it).
 */
export class OpenAIChatEvents implements EventReader<ChatStreamEvent> {
  done = false;

  constructor(private readonly upstreamId: string) {}

  read(event: ServerSentEvent): ChatStreamEvent | undefined {
    const data = event.data;
    if (data === '[DONE]') {
      this.done = true;
      return undefined;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      throw new GatewayError('upstream_invalid_response', `Upstream ${this.upstreamId} sent a stream event that is not JSON.`);
    }
    if (!isObject(parsed)) throw new GatewayError('upstream_invalid_response', `Upstream ${this.upstreamId} sent a stream event that is not a JSON object.`);
    const chunk = parsed as OpenAIChatCompletionChunk;
    if (chunk.error !== undefined && chunk.error !== null) throw mapOpenAIStreamError(chunk.error, this.upstreamId);
    const usage = readChatUsage(chunk.usage);
    const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
    let text = '';
    for (const choice of choices) if (typeof choice === 'object' && choice !== null) text += generatedText(choice.delta);
    return { data, usage, usageOnly: usage !== null && choices.length === 0, text };
  }

  end(): undefined {
    return undefined;
  }
}
