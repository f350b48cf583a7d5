import { setImmediate as nextTurn } from 'node:timers/promises';
import type { ServerResponse } from 'node:http';
import type { ChatStreamEvent } from '../services/index.js';
import type { RequestRecord } from '../usage/index.js';
import { errorBody, forCaller, toGatewayError } from './error-response.js';
import type { PausedStreams } from './paused-streams.js';

const DONE = 'data: [DONE]\n\n';

/**
 * Relays chunks to the client in OpenAI's SSE format as they arrive, honouring backpressure
 * within the bounds PausedStreams sets. Headers go out with the first chunk, so a failure before
 * it could still be answered with a proper status. A failure after it is reported in-band as an
 * `error` event, then the stream ends cleanly: the OpenAI SDKs raise it as an APIError.
 *
 * The first event leaves at once: Node corks a response's socket until the next tick, and that
 * tick waits until every event already received (an upstream often sends several in one read) has
 * been parsed and written. One event-loop turn after the first write sends it; the rest follow
 * together.
 */
export async function writeEventStream(
  response: ServerResponse,
  headers: string[],
  events: AsyncIterable<ChatStreamEvent>,
  record: RequestRecord,
  pausedStreams: PausedStreams,
  onFailure: (error: unknown) => void,
): Promise<void> {
  // No `connection` header of our own: Node keeps the connection alive, or closes it after the
  // stream when the client asked for `Connection: close`.
  response.writeHead(200, [
    ...headers,
    'content-type',
    'text/event-stream; charset=utf-8',
    'cache-control',
    'no-cache',
    // Tells nginx-style proxies in front of the gateway not to buffer the stream.
    'x-accel-buffering',
    'no',
  ]);
  try {
    let first = true;
    for await (const event of events) {
      if (response.destroyed) return;
      record.markFirstByte();
      if (!response.write(`data: ${event.data}\n\n`)) {
        // Leaving the loop ends the events, which stops the upstream.
        if (!(await pausedStreams.waitForReader(response, record))) return;
      } else if (first) await nextTurn();
      first = false;
    }
    response.end(DONE);
  } catch (error) {
    if (response.destroyed) return;
    const gatewayError = toGatewayError(error);
    record.errorCode ??= gatewayError.code;
    onFailure(error);
    response.end(`data: ${JSON.stringify(errorBody(forCaller(gatewayError, record.publicId)))}\n\n`);
  }
}
