import type { Http1Request } from './http1-call.js';

/** Headers the client writes itself, from the request's target and body. */
const OWN_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection']);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const UNSAFE_VALUE = /[\r\n\0]/;

// An adapter sends the same headers object with every request: its lines are built once.
const serialised = new WeakMap<object, string>();

/**
 * The request line and headers, ending with the blank line; throws a TypeError for a header or
 * path that could split the request. A streamed body is sent with the `content-length` its
 * headers give, or chunked. Through a forward proxy, `targetPrefix` (`http://host:port`) makes the
 * target absolute and `proxyLines` carries the proxy's credentials.
 */
export function requestHead(request: Http1Request, host: string, targetPrefix = '', proxyLines = ''): string {
  const { headers, body } = request;
  const contentLength = body === null ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : Buffer.isBuffer(body) ? body.length : null;
  let lines = serialised.get(headers);
  if (lines === undefined) {
    lines = headerLines(headers);
    serialised.set(headers, lines);
  }
  let framing: string;
  if (contentLength !== null) framing = request.method === 'GET' && contentLength === 0 ? '' : `content-length: ${contentLength}\r\n`;
  else {
    const declared = headers['content-length'];
    framing = declared === undefined ? 'transfer-encoding: chunked\r\n' : `content-length: ${checkedLength(declared)}\r\n`;
  }
  const trace = request.traceparent === undefined ? '' : `traceparent: ${checkedTraceparent(request.traceparent)}\r\n`;
  return `${request.method} ${targetPrefix}${checkedPath(request.path)} HTTP/1.1\r\nhost: ${host}\r\n${proxyLines}${lines}${trace}${framing}\r\n`;
}

/** Refuses what would let a header value or path split the request (CR, LF, NUL) or an invalid name. */
function headerLines(headers: Readonly<Record<string, string>>): string {
  let lines = '';
  for (const [name, value] of Object.entries(headers)) {
    if (OWN_HEADERS.has(name.toLowerCase())) continue;
    if (!TOKEN.test(name)) throw new TypeError(`invalid upstream request header name "${name}"`);
    if (UNSAFE_VALUE.test(value)) throw new TypeError(`invalid value for upstream request header "${name}"`);
    lines += `${name}: ${value}\r\n`;
  }
  return lines;
}

/** A W3C trace context is printable ASCII: one with a line break would split the request. */
function checkedTraceparent(value: string): string {
  if (UNSAFE_VALUE.test(value)) throw new TypeError('invalid value for upstream request header "traceparent"');
  return value;
}

function checkedLength(value: string): string {
  if (!/^\d{1,15}$/.test(value)) throw new TypeError(`invalid content-length "${value}" for an upstream request`);
  return value;
}

/** Paths come from configuration and adapters; one with a space or line break would corrupt the request line. */
export function checkedPath(path: string): string {
  if (!/^\/[\x21-\x7e]*$/.test(path)) throw new TypeError(`invalid upstream request path "${path.slice(0, 100)}"`);
  return path;
}
