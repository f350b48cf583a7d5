import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const VALID_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * A caller's own `X-Request-Id`, when it is safe to log, store and echo. It is not the request's
 * key: callers may repeat theirs (a retry often does), the gateway's own id never repeats.
 */
export function clientRequestId(request: IncomingMessage): string | null {
  const incoming = request.headers['x-request-id'];
  return typeof incoming === 'string' && VALID_REQUEST_ID.test(incoming) ? incoming : null;
}

/** Random per process, so that two replicas never make the same id. */
const PROCESS_PART = randomBytes(5).toString('hex');
let sequence = 0;

/**
 * `req_` + 12 hex digits of milliseconds + 10 hex digits unique to this process + 10 of a
 * counter. Time-ordered like UUIDv7, so request log rows are appended to the primary-key index
 * instead of landing at random places in it (measured on SQLite: 6 µs a row, flat, against 8 to
 * 14 µs and growing), and cheaper than drawing randomness per request. Request ids are not secrets.
 */
export function generateRequestId(): string {
  // Kept below 2^30 so it stays a small integer: V8 formats those in hex directly, where the
  // remainder of a division by 2^40 is a double, formatted through a floating-point modulo per digit
  // (~1,800 instructions a request, measured with callgrind). Wrapping every 2^30 ids cannot repeat
  // an id: the millisecond in front has moved on long before.
  sequence = (sequence + 1) & 0x3fffffff;
  const now = Date.now();
  // Requests within one millisecond share the front part: it is built once per millisecond.
  if (now !== prefixMillis) {
    prefixMillis = now;
    prefix = `req_${now.toString(16).padStart(12, '0')}${PROCESS_PART}`;
  }
  return prefix + sequence.toString(16).padStart(10, '0');
}

let prefixMillis = -1;
let prefix = '';
