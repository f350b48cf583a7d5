import type { ChatRequestBody } from '../../providers/provider-adapter.js';
import { estimateChatUsage, type RequestRecord } from '../../usage/index.js';
import { generatedText } from '../../protocols/openai-responses/read-response-events.js';
import type { ResponseObject } from '../../protocols/openai-responses/response-object.js';
import type { ResponsesEventStream, ResponsesServerSentEvent } from '../../protocols/openai-responses/responses-event-stream.js';
import type { ResponseStreamEvent } from '../../protocols/openai-responses/responses-types.js';

export interface StatelessEventsOptions {
  /** The request as chat would have carried it, to estimate usage from when the upstream reports none (as on the converted path). */
  chat: ChatRequestBody;
  record: RequestRecord;
  /** Told of the final response before its `response.completed` (or `.incomplete`) event goes out, and waited for (see convertedEvents). */
  onFinal: (response: ResponseObject) => Promise<void>;
}

/**
 * A Responses upstream's events (codex; the first with output already read with peekFirst), as
 * the gateway's own Responses events (the converter reads them with readResponseEvents). The
 * usage goes on the record when the response ends; an upstream failure after the first event
 * ends the stream in-band, as on the converted path.
 */
export async function* statelessEvents(
  events: AsyncIterableIterator<ResponseStreamEvent>,
  converter: ResponsesEventStream,
  options: StatelessEventsOptions,
): AsyncGenerator<ResponsesServerSentEvent> {
  const { record } = options;
  record.estimateUsage = () => estimateChatUsage(options.chat, generatedText(converter.result().response.output));
  for await (const event of converter.events(events)) {
    if (event.event === 'response.completed' || event.event === 'response.incomplete') {
      const { response, usage } = converter.result();
      if (usage !== null) record.usage = usage;
      await options.onFinal(response);
    }
    yield event;
  }
}
