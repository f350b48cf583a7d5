import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { Pool, type Dispatcher } from 'undici';
import type { UpstreamConfig } from '../../config/index.js';
import type { Cancellation } from '../cancellation.js';
import { ChunkQueue } from './chunk-queue.js';
import { mapTransportError } from './map-transport-error.js';

export interface UpstreamRequest {
  /** Appended to the base URL's path, e.g. `/chat/completions`. */
  path: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  /** A Readable is streamed; give `content-length` in `headers` with it. */
  body?: string | Buffer | Readable;
  cancellation: Cancellation;
}

export interface BufferedResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A 2xx answer's body as it arrives; anything else is read whole, to be mapped to an error. */
export type StreamingResponse =
  | { ok: true; statusCode: number; headers: IncomingHttpHeaders; body: AsyncIterableIterator<Buffer> }
  | { ok: false; statusCode: number; headers: IncomingHttpHeaders; body: Buffer };

class CancelledError extends Error {
  constructor() {
    super('the caller went away');
    this.name = 'AbortError';
  }
}

/**
 * One keep-alive connection pool per upstream credential, with the three timeouts a streaming
 * upstream needs: connect, first byte (response headers), and idle gaps between body chunks.
 * Requests go through undici's `dispatch` callbacks rather than `request()`: no Node stream is made
 * per response, which measured at about half the client's CPU per request.
 */
export class UpstreamClient {
  private readonly pool: Pool;
  private readonly pathPrefix: string;

  constructor(
    baseUrl: string,
    private readonly upstream: UpstreamConfig,
  ) {
    const url = new URL(baseUrl);
    this.pathPrefix = url.pathname.replace(/\/+$/, '');
    this.pool = new Pool(url.origin, {
      connections: upstream.max_connections,
      connectTimeout: upstream.timeouts.connect_ms,
      keepAliveTimeout: 30_000,
      headersTimeout: upstream.timeouts.first_byte_ms,
      bodyTimeout: upstream.timeouts.idle_ms,
    });
  }

  /** The whole response, for JSON answers. */
  requestBuffered(request: UpstreamRequest): Promise<BufferedResponse> {
    return new Promise((resolve, reject) => {
      let statusCode = 0;
      let headers: IncomingHttpHeaders = {};
      const chunks: Buffer[] = [];
      this.dispatch(request, {
        onRequestStart: (controller) => request.cancellation.onCancel(() => controller.abort(new CancelledError())),
        onResponseStart: (_controller, status, responseHeaders) => {
          statusCode = status;
          headers = responseHeaders;
        },
        onResponseData: (_controller, chunk) => {
          chunks.push(chunk);
        },
        onResponseEnd: () => {
          request.cancellation.clear();
          resolve({ statusCode, headers, body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks) });
        },
        onResponseError: (_controller, error) => {
          request.cancellation.clear();
          reject(mapTransportError(error, this.upstream.id));
        },
      });
    });
  }

  /** Resolves when the response headers arrive; a 2xx body is then read chunk by chunk. */
  openStream(request: UpstreamRequest): Promise<StreamingResponse> {
    return new Promise((resolve, reject) => {
      let queue: ChunkQueue | null = null;
      let statusCode = 0;
      let headers: IncomingHttpHeaders = {};
      const errorChunks: Buffer[] = [];
      this.dispatch(request, {
        onRequestStart: (controller) => request.cancellation.onCancel(() => controller.abort(new CancelledError())),
        onResponseStart: (controller, status, responseHeaders) => {
          statusCode = status;
          headers = responseHeaders;
          if (status < 200 || status >= 300) return;
          queue = new ChunkQueue({
            pause: () => controller.pause(),
            resume: () => controller.resume(),
            abort: () => controller.abort(new CancelledError()),
          });
          resolve({ ok: true, statusCode, headers, body: queue });
        },
        onResponseData: (_controller, chunk) => {
          if (queue !== null) queue.push(chunk);
          else errorChunks.push(chunk);
        },
        onResponseEnd: () => {
          request.cancellation.clear();
          if (queue !== null) queue.end();
          else resolve({ ok: false, statusCode, headers, body: Buffer.concat(errorChunks) });
        },
        onResponseError: (_controller, error) => {
          request.cancellation.clear();
          const mapped = mapTransportError(error, this.upstream.id);
          if (queue !== null) queue.fail(mapped);
          else reject(mapped);
        },
      });
    });
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  private dispatch(request: UpstreamRequest, handler: Dispatcher.DispatchHandler): void {
    this.pool.dispatch(
      { path: this.pathPrefix + request.path, method: request.method, headers: request.headers, body: request.body ?? null },
      handler,
    );
  }
}

export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
