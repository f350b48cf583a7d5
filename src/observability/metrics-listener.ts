import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the listener serves: one gateway's metrics, or every worker's added up (cluster-metrics.ts). */
export interface ScrapedMetrics {
  readonly contentType: string;
  text(): Promise<string>;
}

/** The second listener of `metrics.listen`: its address once it listens, and how to close it. */
export interface MetricsListener {
  readonly url: string;
  close(): Promise<void>;
}

/** Splits `host:port` (`[::1]:9464` for IPv6) as `metrics.listen` writes it. */
export function listenAddress(listen: string): { host: string; port: number } {
  const colon = listen.lastIndexOf(':');
  const host = listen.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
  return { host, port: Number(listen.slice(colon + 1)) };
}

/**
 * `GET /metrics` without authentication on an address of its own, for a scraper inside the
 * cluster; everything else is 404. Bind it where only the monitoring system reaches it.
 */
export async function startMetricsListener(listen: string, metrics: ScrapedMetrics, onError: (error: unknown) => void): Promise<MetricsListener> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found: this listener serves GET /metrics\n');
      return;
    }
    metrics.text().then(
      (text) => {
        response.writeHead(200, { 'content-type': metrics.contentType, 'cache-control': 'no-store' });
        response.end(request.method === 'HEAD' ? undefined : text);
      },
      (error: unknown) => {
        onError(error);
        response.writeHead(500, { 'content-type': 'text/plain' }).end('the metrics could not be collected\n');
      },
    );
  });
  // A scraper keeps its connection; a slow or silent one must not hold a socket for ever, nor many of them.
  server.maxConnections = 64;
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.keepAliveTimeout = 65_000;
  const { host, port } = listenAddress(listen);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
