import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const VALID_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Echoes a caller's `X-Request-Id` when it is safe to log and store; otherwise makes one. */
export function requestId(request: IncomingMessage): string {
  const incoming = request.headers['x-request-id'];
  if (typeof incoming === 'string' && VALID_REQUEST_ID.test(incoming)) return incoming;
  return `req_${randomUUID().replace(/-/g, '')}`;
}
