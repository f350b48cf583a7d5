import { GatewayError } from '../../errors/index.js';
import type { ChatStreamEvent } from '../provider-adapter.js';
import { ServerSentEventDecoder } from '../shared/server-sent-events.js';
import { classifyTransport } from '../shared/classify-upstream-failure.js';
import type { OpenAIChatCompletionChunk } from './openai-api.js';
import { mapOpenAIStreamError } from './map-openai-error.js';
import { generatedText, mapOpenAIUsage } from './map-openai-usage.js';

/**
 * Turns an OpenAI-compatible SSE body into chunk events as they arrive. Each chunk's JSON is
 * forwarded as the upstream wrote it; it is parsed only to read usage and generated text.
 */
export async function* readOpenAIChatStream(body: AsyncIterableIterator<Buffer>, upstreamId: string, maxEventBytes?: number): AsyncGenerator<ChatStreamEvent> {
  const decoder = new ServerSentEventDecoder(maxEventBytes);
  try {
    for await (const chunk of body) {
      for (const event of decoder.push(chunk)) {
        if (event.data === '[DONE]') return;
        yield toEvent(event.data, upstreamId);
      }
    }
    for (const event of decoder.end()) {
      if (event.data === '[DONE]') return;
      yield toEvent(event.data, upstreamId);
    }
  } catch (error) {
    throw classifyTransport(error, upstreamId);
  } finally {
    // Stops the upstream generating (and billing) when the client went away early.
    await body.return?.();
  }
}

function toEvent(data: string, upstreamId: string): ChatStreamEvent {
  let chunk: OpenAIChatCompletionChunk;
  try {
    chunk = JSON.parse(data) as OpenAIChatCompletionChunk;
  } catch {
    throw new GatewayError('upstream_invalid_response', `Upstream ${upstreamId} sent a stream event that is not JSON.`);
  }
  if (typeof chunk !== 'object' || chunk === null || Array.isArray(chunk)) {
    throw new GatewayError('upstream_invalid_response', `Upstream ${upstreamId} sent a stream event that is not a JSON object.`);
  }
  if (chunk.error !== undefined && chunk.error !== null) throw mapOpenAIStreamError(chunk.error, upstreamId);
  const usage = mapOpenAIUsage(chunk.usage);
  const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
  let text = '';
  for (const choice of choices) if (typeof choice === 'object' && choice !== null) text += generatedText(choice.delta);
  return { data, usage, usageOnly: usage !== null && choices.length === 0, text };
}
