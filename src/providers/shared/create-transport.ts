import { Http1Pool } from './http1/http1-pool.js';
import type { Transport, TransportOptions } from './transport.js';

/** The transport every upstream client uses (see docs/upstream-http.md for the choice). */
export function createTransport(origin: URL, options: TransportOptions): Transport {
  return new Http1Pool(origin, options);
}
