import type { IncomingHttpHeaders } from 'node:http';
import type { EndpointConfig } from '../../config/index.js';
import { GatewayError } from '../../errors/index.js';
import type { Attempt } from '../provider-adapter.js';
import { CredentialHeaders, bearerHeaders } from './credential-headers.js';
import { UpstreamClient } from './upstream-client.js';

/** A provider's error mapping: status, headers and body text to a classified GatewayError. */
export type UpstreamErrorMapper = (status: number, bodyText: string, headers: IncomingHttpHeaders | undefined, credentialId: string) => GatewayError;

/**
 * A JSON-over-HTTP endpoint: posts a body with the attempt's credential, maps a non-2xx answer
 * with the provider's own error mapping, and parses a 2xx answer, which must be a JSON object or
 * array.
 */
export class JsonUpstream {
  private readonly client: UpstreamClient;
  private readonly headers = new CredentialHeaders(bearerHeaders);

  constructor(
    baseUrl: string,
    endpoint: EndpointConfig,
    private readonly mapError: UpstreamErrorMapper,
  ) {
    this.client = new UpstreamClient(baseUrl, endpoint);
  }

  async post<T>(attempt: Attempt, path: string, body: unknown, cancellation: AbortSignal): Promise<T> {
    const credentialId = attempt.credential.id;
    const response = await this.client.requestBuffered({ path, method: 'POST', headers: this.headers.of(attempt.credential), body: JSON.stringify(body), cancellation, attempt });
    if (response.statusCode < 200 || response.statusCode >= 300) {
      throw this.mapError(response.statusCode, response.body.toString('utf8'), response.headers, credentialId);
    }
    let parsed: unknown = null;
    try {
      parsed = JSON.parse(response.body.toString('utf8'));
    } catch {
      // Reported below.
    }
    if (typeof parsed !== 'object' || parsed === null) {
      throw new GatewayError('upstream_invalid_response', `Upstream ${credentialId} answered with a body that is not JSON.`);
    }
    return parsed as T;
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
