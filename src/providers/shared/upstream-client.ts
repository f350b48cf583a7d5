import { Pool, type Dispatcher } from 'undici';
import type { UpstreamConfig } from '../../config/index.js';
import { mapTransportError } from './map-transport-error.js';

export interface UpstreamRequest {
  /** Appended to the base URL's path, e.g. `/chat/completions`. */
  path: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string | Uint8Array;
  signal: AbortSignal;
}

export type UpstreamResponse = Dispatcher.ResponseData;

/**
 * One keep-alive connection pool per upstream credential, with the three timeouts a streaming
 * upstream needs: connect, first byte (response headers), and idle gaps between body chunks.
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

  async request(request: UpstreamRequest): Promise<UpstreamResponse> {
    try {
      return await this.pool.request({
        path: this.pathPrefix + request.path,
        method: request.method,
        headers: request.headers,
        body: request.body ?? null,
        signal: request.signal,
      });
    } catch (error) {
      throw mapTransportError(error, this.upstream.id);
    }
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** Reads at most `limit` bytes of an error body; upstream error pages can be large HTML. */
export async function readErrorBody(body: UpstreamResponse['body'], limit = 64 * 1024): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      const buffer = chunk as Buffer;
      chunks.push(buffer);
      size += buffer.length;
      if (size >= limit) break;
    }
  } catch {
    // A broken error body still leaves the status code to report.
  } finally {
    body.destroy();
  }
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
}
