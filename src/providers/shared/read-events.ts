import { classifyTransport } from './classify-upstream-failure.js';
import { ServerSentEventDecoder, type ServerSentEvent } from './server-sent-events.js';

/**
 * How a provider reads its event stream, one event at a time: the provider's converter from its
 * wire events to the gateway's. One reader serves one stream (it may keep state across events).
 * Anything it throws fails the stream, classified like a transport failure (a GatewayError as is).
 */
export interface EventReader<T> {
  /** What one event makes: an item, or undefined when it makes none (a ping, a note kept for later). */
  read(event: ServerSentEvent): T | undefined;
  /** Set once the stream's last event has been read (`[DONE]`, `message_stop`): nothing after it is read. */
  readonly done: boolean;
  /**
   * The upstream closed the stream without the last event: the first item still owed (then
   * `more`), or undefined; it throws when a stream cut short is a failure.
   */
  end(): T | undefined;
  /** Further items of the last `read` or `end`, one per call, until undefined: for a reader that makes several of one event. */
  more?(): T | undefined;
  /** Sees each chunk of the body before its events are read (an error written without SSE framing). */
  received?(chunk: Buffer): void;
}

/**
 * The read loop of every event stream, written once: decodes Server-Sent Events from the body as
 * it arrives, hands each to the reader and yields what it makes, then the reader's end. A failure
 * is classified (classify-upstream-failure.ts); and however the stream ends, the body is closed,
 * which stops the upstream generating (and billing) when the client went away early.
 */
export async function* readEvents<T>(
  body: AsyncIterableIterator<Buffer>,
  reader: EventReader<T>,
  credentialId: string,
  maxEventBytes?: number,
): AsyncGenerator<T> {
  const decoder = new ServerSentEventDecoder(maxEventBytes);
  try {
    for await (const chunk of body) {
      reader.received?.(chunk);
      for (const event of decoder.push(chunk)) {
        for (let item = reader.read(event); item !== undefined; item = reader.more?.()) yield item;
        if (reader.done) return;
      }
    }
    for (const event of decoder.end()) {
      for (let item = reader.read(event); item !== undefined; item = reader.more?.()) yield item;
      if (reader.done) return;
    }
    for (let item = reader.end(); item !== undefined; item = reader.more?.()) yield item;
  } catch (error) {
    throw classifyTransport(error, credentialId);
  } finally {
    await body.return?.();
  }
}
