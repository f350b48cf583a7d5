import type { Transport, TransportOptions } from './transport.js';
import { UndiciTransport } from './undici-transport.js';

/** The transport every upstream client uses (see docs/upstream-http.md for the choice). */
export function createTransport(origin: URL, options: TransportOptions): Transport {
  return new UndiciTransport(origin, options);
}
