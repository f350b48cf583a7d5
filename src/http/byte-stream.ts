import { setImmediate as nextTurn } from 'node:timers/promises';
import type { ServerResponse } from 'node:http';
import type { RequestRecord } from '../usage/index.js';
import { toGatewayError } from './error-response.js';
import type { PausedStreams } from './paused-streams.js';
import type { HeaderList } from './send-response.js';

/**
 * Writes pieces to the client as they arrive, within the bounds PausedStreams sets on a client
 * that stops reading; the first leaves at once (see writeEventStream). Resolves false when the
 * client went away (leaving the loop ends the pieces, which stops the upstream); a failure of the
 * pieces is thrown for the caller to say as its protocol allows.
 */
export async function relayPieces(
  response: ServerResponse,
  pieces: AsyncIterable<string | Buffer>,
  record: RequestRecord,
  pausedStreams: PausedStreams,
): Promise<boolean> {
  let first = true;
  for await (const piece of pieces) {
    if (response.destroyed) return false;
    record.markFirstByte();
    if (!response.write(piece)) {
      if (!(await pausedStreams.waitForReader(response, record))) return false;
    } else if (first) await nextTurn();
    first = false;
  }
  return true;
}

/**
 * Relays an upstream's bytes as they arrive (speech audio, a native event stream), each chunk
 * written as it came. A failure after the status went out can only be said by cutting the
 * response, as the upstream cut its own: the client sees what it would have seen talking to the
 * upstream.
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
    if (await relayPieces(response, body, record, pausedStreams)) response.end();
  } catch (error) {
    if (response.destroyed) return;
    record.errorCode ??= toGatewayError(error).code;
    onFailure(error);
    response.destroy();
  }
}
