import type { ChatRequestBody, ChatStreamEvent } from '../../providers/provider-adapter.js';
import type { RequestRecord } from '../../usage/index.js';
import { recordedChunks } from '../recorded-chunks.js';
import type { ResponseObject } from '../../protocols/openai-responses/response-object.js';
import type { ResponsesEventStream, ResponsesServerSentEvent } from '../../protocols/openai-responses/responses-event-stream.js';

export interface ConvertedEventsOptions {
  /** The chat request the upstream got, to estimate usage from when it reports none. */
  chat: ChatRequestBody;
  record: RequestRecord;
  /**
   * Told of the final response before its `response.completed` (or `.incomplete`) event goes
   * out, and waited for: a client that sends the next turn as soon as it reads that event finds
   * the response stored.
   */
  onFinal: (response: ResponseObject) => Promise<void>;
}

/**
 * A chat stream (its first chunk already read with peekFirst), as Responses API events. Usage and generated
 * text are noted on the record as the chunks pass, as chat does; an upstream failure after the
 * first chunk ends the stream in-band (`error`, `response.failed`), in the words the converter's
 * `toCaller` gives it.
 */
export async function* convertedEvents(
  events: AsyncIterator<ChatStreamEvent>,
  converter: ResponsesEventStream,
  options: ConvertedEventsOptions,
): AsyncGenerator<ResponsesServerSentEvent> {
  for await (const event of converter.events(recordedChunks(events, options.chat, options.record))) {
    if (event.event === 'response.completed' || event.event === 'response.incomplete') await options.onFinal(converter.result().response);
    yield event;
  }
}
