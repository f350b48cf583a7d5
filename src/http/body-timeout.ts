import type { IncomingMessage, ServerResponse } from 'node:http';

/** Whether a request announces a body: Node's parser reads one only then. */
export function announcesBody(request: IncomingMessage): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Gives up on a request body that stops arriving: when the socket has been silent for
 * `timeoutMs` while the body is incomplete, `onTimeout` runs (it answers 408 or drops the
 * connection). nginx's `client_body_timeout` has the same meaning: silence between two reads,
 * not the time the whole upload takes, so a large upload on a slow link is never cut while it
 * progresses. The socket's own timer is used (restarted by every read): no timer per request.
 */
export function watchRequestBody(
  request: IncomingMessage,
  response: ServerResponse,
  timeoutMs: number,
  onTimeout: (request: IncomingMessage, response: ServerResponse) => void,
): void {
  const { socket } = request;
  const stop = (): void => {
    socket.setTimeout(0);
    request.off('timeout', expire);
  };
  // Node emits `timeout` on the request only while its body is incomplete.
  const expire = (): void => {
    stop();
    onTimeout(request, response);
  };
  socket.setTimeout(timeoutMs);
  request.once('timeout', expire);
  // `end` also comes when Node discards a body nobody read (an answer sent before reading it).
  request.once('end', stop);
}
