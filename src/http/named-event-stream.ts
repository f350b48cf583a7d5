import type { ServerResponse } from 'node:http';
import type { GatewayError } from '../errors/index.js';
import type { RequestRecord } from '../usage/index.js';
import { relayPieces } from './byte-stream.js';
import { maskedErrorEvents } from './masked-error-events.js';
import type { PausedStreams } from './paused-streams.js';
import type { HeaderList } from './send-response.js';

/** A streamed answer of a protocol whose events are named (Responses, Messages): events the gateway made (conversion), or an upstream's own bytes. */
export type NamedEventStreamBody = { kind: 'events'; events: AsyncIterable<{ event: string; data: string }> } | { kind: 'bytes'; body: AsyncIterable<Buffer> };

/**
 * Writes a stream of named events (the Responses API's, the Messages API's): each converted event
 * as `event: <type>\ndata: <json>\n\n` (neither protocol has `[DONE]`), or an upstream's bytes
 * as they came, its error events' quoted keys masked (maskedErrorEvents). Back-pressure and the
 * first event's flush are relayPieces' (chat's writer, whose bytes this leaves alone).
 *
 * A failure after the status went out is said in-band, as an `error` event whose data is the
 * protocol's (`errorData`), and the stream ends: the SDKs raise it. Conversion already ends its
 * own stream so; this is for an upstream's stream cut short, or a bug. An upstream's bytes go out
 * in whole events (maskedErrorEvents), so the error is always an event of its own: half an event
 * the upstream never finished is not sent.
 */
export async function writeNamedEventStream(
  response: ServerResponse,
  headers: HeaderList,
  body: NamedEventStreamBody,
  record: RequestRecord,
  pausedStreams: PausedStreams,
  failedMidStream: (error: unknown) => GatewayError,
  errorData: (error: GatewayError) => object,
): Promise<void> {
  response.writeHead(200, [...headers, 'content-type', 'text/event-stream; charset=utf-8', 'cache-control', 'no-cache', 'x-accel-buffering', 'no']);
  try {
    if (await relayPieces(response, body.kind === 'events' ? framed(body.events) : maskedErrorEvents(body.body), record, pausedStreams)) response.end();
  } catch (error) {
    if (response.destroyed) return;
    const event = `event: error\ndata: ${JSON.stringify(errorData(failedMidStream(error)))}\n\n`;
    response.end(event);
  }
}

async function* framed(events: AsyncIterable<{ event: string; data: string }>): AsyncGenerator<string> {
  for await (const { event, data } of events) yield `event: ${event}\ndata: ${data}\n\n`;
}
