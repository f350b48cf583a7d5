import { GatewayError } from '../../errors/index.js';
import type { ErrorDialect } from '../shared/classify-upstream-failure.js';
import type { AnthropicErrorBody, AnthropicErrorObject } from '../../protocols/anthropic-messages/messages-types.js';

/** What an Anthropic error body says (`{"type":"error","error":{"type","message"}}`); 529 is its "overloaded". */
export const anthropicErrorDialect: ErrorDialect = {
  read(_status, bodyText) {
    const error = parseError(bodyText);
    return error === null ? null : { message: error.message };
  },
};

/**
 * An `error` event inside a stream that had started. Anthropic sends the error types it would
 * have answered with as a status, so they are mapped the same way.
 */
export function mapAnthropicStreamError(error: AnthropicErrorObject | null | undefined, upstreamId: string): GatewayError {
  const type = error?.type ?? 'api_error';
  const message = `Upstream ${upstreamId} failed mid-stream (${type}): ${error?.message ?? 'unknown error'}`;
  switch (type) {
    case 'invalid_request_error':
    case 'request_too_large':
      return new GatewayError('upstream_bad_request', message);
    case 'authentication_error':
    case 'permission_error':
      return new GatewayError('upstream_auth_failed', message);
    case 'rate_limit_error':
      return new GatewayError('upstream_rate_limited', message, { retryAfterSeconds: 1 });
    case 'timeout_error':
      return new GatewayError('upstream_timeout', message);
    default:
      // overloaded_error, api_error and types added later: the upstream's failure, retryable.
      return new GatewayError('upstream_error', message);
  }
}

function parseError(bodyText: string): AnthropicErrorObject | null {
  try {
    const body = JSON.parse(bodyText) as AnthropicErrorBody;
    if (typeof body.error === 'object' && body.error !== null) return body.error;
  } catch {
    // Not JSON (a proxy's HTML page, say): the raw text is the message.
  }
  return null;
}
