import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../../errors/index.js';
import { bodyErrors } from '../error-response.js';
import { parseJsonBody } from '../json-body.js';
import { contentEncodingError, decodeRequestBody } from '../request-body-encoding.js';

const EMPTY = Buffer.alloc(0);

export type JsonBodyCallback = (error: GatewayError | null, body: unknown) => void;

/**
 * Reads a request body as JSON, with the rules the Fastify routes follow (their parser is
 * configured alike, and parse with the same parseJsonBody): only `application/json`, at most
 * `limitBytes` (sent, and once decoded when the body is compressed), nesting and prototype keys checked. A bodiless request without a content type gives
 * `undefined`, for the route's validation to name. Callback-based: on the hot path a promise
 * per request is measurable.
 */
export function readJsonBody(request: IncomingMessage, limitBytes: number, done: JsonBodyCallback): void {
  const { headers } = request;
  const contentType = headers['content-type'];
  const declaredLength = headers['content-length'];
  if (contentType === undefined) {
    if (headers['transfer-encoding'] === undefined && (declaredLength === undefined || declaredLength === '0')) return done(null, undefined);
    return done(bodyErrors.unsupportedMediaType(), undefined);
  }
  if (!isJsonMediaType(contentType)) return done(bodyErrors.unsupportedMediaType(), undefined);
  const contentEncoding = headers['content-encoding'];
  const encodingError = contentEncodingError(contentEncoding);
  if (encodingError !== null) return done(encodingError, undefined);
  if (declaredLength !== undefined && Number(declaredLength) > limitBytes) return done(bodyErrors.tooLarge(), undefined);

  let first: Buffer | null = null;
  let rest: Buffer[] | null = null;
  let received = 0;
  let settled = false;
  const settle = (error: GatewayError | null, body: unknown): void => {
    if (settled) return;
    settled = true;
    done(error, body);
  };
  request.on('data', (chunk: Buffer) => {
    if (settled) return;
    received += chunk.length;
    if (received > limitBytes) {
      first = null;
      rest = null;
      return settle(bodyErrors.tooLarge(), undefined);
    }
    if (first === null) first = chunk;
    else (rest ??= [first]).push(chunk);
  });
  const parse = (bytes: Buffer): void => {
    let body: unknown;
    try {
      body = parseJsonBody(bytes);
    } catch (error) {
      // parseJsonBody throws only the body errors.
      return settle(error as GatewayError, undefined);
    }
    settle(null, body);
  };
  request.on('end', () => {
    if (settled) return;
    const bytes = rest !== null ? Buffer.concat(rest) : (first ?? EMPTY);
    if (contentEncoding === undefined) return parse(bytes);
    decodeRequestBody(bytes, contentEncoding, limitBytes, (error, decoded) => (error === null ? parse(decoded) : settle(error, undefined)));
  });
  // The client went away mid-body: the response's close listener records it; nothing to answer.
  request.on('error', () => settle(new GatewayError('invalid_body', 'The request body ended early.'), undefined));
}

function isJsonMediaType(contentType: string): boolean {
  if (contentType === 'application/json') return true;
  const semicolon = contentType.indexOf(';');
  return (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase() === 'application/json';
}
