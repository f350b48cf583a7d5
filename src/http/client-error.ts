import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { GatewayError } from '../errors/index.js';
import { errorBody } from './error-response.js';

/**
 * What Node's HTTP parser refuses before any route sees the request (header overflow, bad chunked
 * framing, Content-Length together with Transfer-Encoding, a header timeout), answered in the
 * same `{"error": {…}}` shape as every other error. Without a request there is no request id,
 * and no request-log row: nothing was authenticated.
 */
export function clientErrorAnswer(error: Error & { code?: string }): GatewayError {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new GatewayError('request_headers_too_large', 'The request headers are larger than the server accepts.');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'ERR_HTTP_HEADERS_TIMEOUT':
      return new GatewayError('request_timeout', 'The request did not arrive in time.');
    default:
      return new GatewayError('malformed_request', 'The HTTP request could not be parsed.');
  }
}

/** How long the answer may wait to reach the kernel (a peer that reads nothing and whose window is full) before the socket is closed without it. */
const FLUSH_GRACE_MS = 1_000;

/**
 * For Fastify's `clientErrorHandler`: answers, then closes the connection (its framing cannot be
 * trusted). Closed fully, once the answer is handed to the kernel: the server's sockets allow
 * half-open connections, so `end()` alone would keep the socket, and its slot, until the peer
 * closes its side, which a client that neither reads nor closes never does.
 */
export function handleClientError(error: Error & { code?: string }, socket: Socket): void {
  // A reset connection, or one already answered, has nobody left to tell.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // As Node's own default does: a response already under way on this socket cannot be followed by another.
  if (!socket.writable || (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true) {
    socket.destroy(error);
    return;
  }
  const answer = clientErrorAnswer(error);
  const body = JSON.stringify(errorBody(answer));
  const fallback = setTimeout(() => socket.destroy(), FLUSH_GRACE_MS).unref();
  socket.end(
    `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? ''}\r\n` +
      'content-type: application/json; charset=utf-8\r\n' +
      `content-length: ${Buffer.byteLength(body)}\r\n` +
      'connection: close\r\n\r\n' +
      body,
    () => {
      clearTimeout(fallback);
      socket.destroy();
    },
  );
}
