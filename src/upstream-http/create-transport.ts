import { rootCertificates } from 'node:tls';
import type { ResolvedNetwork } from '../config/index.js';
import type { UpstreamTls } from './connect-upstream.js';
import { Http1Pool } from './http1/http1-pool.js';
import { proxyFor } from './proxy-for.js';
import type { Transport, TransportOptions } from './transport.js';
import { UndiciTransport } from './undici-transport.js';

/**
 * The transport of one endpoint (see docs/upstream-http.md for the choice): the gateway's own
 * HTTP/1.1 client, or undici's for an https endpoint with `network.http2: true`. Both open their
 * connections through the same connector, with the endpoint's proxy, CAs and client certificate.
 */
export function createTransport(origin: URL, options: TransportOptions, network: ResolvedNetwork): Transport {
  const proxy = proxyFor(origin, network.proxy);
  const tls: UpstreamTls = {
    // Extra CAs are trusted beside the system's, not instead of them.
    ...(network.ca === null ? {} : { ca: [...rootCertificates, network.ca] }),
    ...(network.cert === null || network.key === null ? {} : { cert: network.cert, key: network.key }),
  };
  if (network.http2 && origin.protocol === 'https:') {
    const host = origin.hostname.startsWith('[') ? origin.hostname.slice(1, -1) : origin.hostname;
    return new UndiciTransport(origin, options, { host, port: origin.port === '' ? 443 : Number(origin.port), secure: true, tls, proxy });
  }
  return new Http1Pool(origin, { ...options, tls, proxy });
}
