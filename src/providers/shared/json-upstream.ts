import type { IncomingHttpHeaders } from 'node:http';
import type { UpstreamConfig } from '../../config/index.js';
import { GatewayError } from '../../errors/index.js';
import { UpstreamClient } from './upstream-client.js';

/** A provider's error mapping: status, headers and body text to a classified GatewayError. */
export type UpstreamErrorMapper = (status: number, bodyText: string, headers: IncomingHttpHeaders | undefined, upstreamId: string) => GatewayError;

/** `content-type: application/json`, the key as a Bearer token when there is one, then the configured extra headers. */
export function bearerHeaders(upstream: UpstreamConfig): Record<string, string> {
  return {
    'content-type': 'application/json',
    ...(upstream.api_key ? { authorization: `Bearer ${upstream.api_key}` } : {}),
    ...upstream.headers,
  };
}

/**
 * A JSON-over-HTTP upstream: posts a body, maps a non-2xx answer with the provider's own error
 * mapping, and parses a 2xx answer, which must be a JSON object or array.
 */
export class JsonUpstream {
  private readonly client: UpstreamClient;

  constructor(
    baseUrl: string,
    private readonly upstream: UpstreamConfig,
    private readonly headers: Record<string, string>,
    private readonly mapError: UpstreamErrorMapper,
  ) {
    this.client = new UpstreamClient(baseUrl, upstream);
  }

  async post<T>(path: string, body: unknown, cancellation: AbortSignal): Promise<T> {
    const response = await this.client.requestBuffered({ path, method: 'POST', headers: this.headers, body: JSON.stringify(body), cancellation });
    if (response.statusCode < 200 || response.statusCode >= 300) {
      throw this.mapError(response.statusCode, response.body.toString('utf8'), response.headers, this.upstream.id);
    }
    let parsed: unknown = null;
    try {
      parsed = JSON.parse(response.body.toString('utf8'));
    } catch {
      // Reported below.
    }
    if (typeof parsed !== 'object' || parsed === null) {
      throw new GatewayError('upstream_invalid_response', `Upstream ${this.upstream.id} answered with a body that is not JSON.`);
    }
    return parsed as T;
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
