import { setImmediate as nextTurn } from 'node:timers/promises';
import type { ServerResponse } from 'node:http';
import type { RequestRecord } from '../usage/index.js';
import { toGatewayError } from './error-response.js';
import type { PausedStreams } from './paused-streams.js';
import type { HeaderList } from './send-response.js';

/**
 * Relays an upstream's bytes as they arrive (speech audio, a native event stream), each chunk
 * written as it came, within the bounds PausedStreams sets on a client that stops reading. The
 * first chunk leaves at once (see writeEventStream). A failure after the status went out can only
 * be said by cutting the response, as the upstream cut its own: the client sees what it would
 * have seen talking to the upstream.
 */
export async function writeByteStream(
  response: ServerResponse,
  statusCode: number,
  headers: HeaderList,
  body: AsyncIterable<Buffer>,
  record: RequestRecord,
  pausedStreams: PausedStreams,
  onFailure: (error: unknown) => void,
): Promise<void> {
  response.writeHead(statusCode, headers);
  try {
    let first = true;
    for await (const chunk of body) {
      if (response.destroyed) return;
      record.markFirstByte();
      // Leaving the loop ends the body, which stops the upstream.
      if (!response.write(chunk)) {
        if (!(await pausedStreams.waitForReader(response, record))) return;
      } else if (first) await nextTurn();
      first = false;
    }
    response.end();
  } catch (error) {
    if (response.destroyed) return;
    record.errorCode ??= toGatewayError(error).code;
    onFailure(error);
    response.destroy();
  }
}
