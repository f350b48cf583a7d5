import type { ServerResponse } from 'node:http';
import type { GatewayError } from '../errors/index.js';
import { responsesErrorEvent, type ResponsesOutcome } from '../services/index.js';
import type { RequestRecord } from '../usage/index.js';
import { relayPieces } from './byte-stream.js';
import type { PausedStreams } from './paused-streams.js';
import type { HeaderList } from './send-response.js';

/** A streamed `/v1/responses` answer: events the gateway made (conversion), or an upstream's own bytes. */
export type ResponsesStreamBody = Exclude<ResponsesOutcome, { kind: 'json' }>;

/**
 * Writes a Responses API stream: each converted event as `event: <type>\ndata: <json>\n\n`
 * (the Responses API has no `[DONE]`), or an upstream's bytes as they came. Back-pressure and the
 * first event's flush are writeEventStream's (chat's writer, whose bytes this leaves alone).
 *
 * A failure after the status went out is said in-band, as an `error` event, and the stream ends:
 * the SDKs raise it. Conversion already ends its own stream so (`error`, `response.failed`); this
 * is for an upstream's stream cut short, or a bug. When the upstream's bytes stopped inside an
 * event, a blank line ends that event first, so that the error is an event of its own.
 */
export async function writeResponsesStream(
  response: ServerResponse,
  headers: HeaderList,
  body: ResponsesStreamBody,
  record: RequestRecord,
  pausedStreams: PausedStreams,
  failedMidStream: (error: unknown) => GatewayError,
): Promise<void> {
  response.writeHead(200, [...headers, 'content-type', 'text/event-stream; charset=utf-8', 'cache-control', 'no-cache', 'x-accel-buffering', 'no']);
  const boundary = new EventBoundary();
  try {
    if (await relayPieces(response, body.kind === 'events' ? framed(body.events) : body.body, record, pausedStreams, (piece) => boundary.wrote(piece))) response.end();
  } catch (error) {
    if (response.destroyed) return;
    const event = `event: error\ndata: ${JSON.stringify(responsesErrorEvent(failedMidStream(error)))}\n\n`;
    response.end(boundary.atBoundary ? event : `\n\n${event}`);
  }
}

async function* framed(events: AsyncIterable<{ event: string; data: string }>): AsyncGenerator<string> {
  for await (const { event, data } of events) yield `event: ${event}\ndata: ${data}\n\n`;
}

/** Whether what was written so far ends between events (a blank line last, or nothing yet). */
class EventBoundary {
  /** The last bytes written, enough to see `\n\n`, `\r\r` or `\r\n\r\n`. */
  private tail = '';

  get atBoundary(): boolean {
    return this.tail === '' || this.tail.endsWith('\n\n') || this.tail.endsWith('\r\r') || this.tail.endsWith('\r\n\r\n');
  }

  wrote(piece: string | Buffer): void {
    const text = typeof piece === 'string' ? piece.slice(-4) : piece.subarray(-4).toString('latin1');
    this.tail = (this.tail + text).slice(-4);
  }
}
