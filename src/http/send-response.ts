import type { ServerResponse } from 'node:http';
import type { GatewayError } from '../errors/index.js';
import { errorBody, errorHeaders } from './error-response.js';

/**
 * Response headers as one flat `[name, value, name, value…]` list: `writeHead` takes it straight
 * to the wire, where an object, or headers set one by one beforehand, are copied and merged first.
 */
export type HeaderList = string[];

/** One write: status, headers and the whole body. Appends the content headers to `headers`, which the caller made for this response. */
export function sendBody(response: ServerResponse, status: number, contentType: string, payload: string | Uint8Array, headers: HeaderList): void {
  headers.push('content-type', contentType, 'content-length', String(typeof payload === 'string' ? Buffer.byteLength(payload) : payload.byteLength));
  response.writeHead(status, headers);
  response.end(payload);
}

/** An error in the shape every route answers with (see error-response.ts). A response already under way can only be cut. */
export function sendError(response: ServerResponse, error: GatewayError, headers: HeaderList): void {
  if (response.destroyed) return;
  if (response.headersSent) {
    if (!response.writableEnded) response.destroy();
    return;
  }
  for (const [name, value] of Object.entries(errorHeaders(error))) headers.push(name, value);
  sendBody(response, error.status, 'application/json; charset=utf-8', JSON.stringify(errorBody(error)), headers);
}
