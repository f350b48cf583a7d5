import { GatewayError, isGatewayError } from '../../errors/index.js';

// First-byte and idle timeouts are the upstream client's own GatewayErrors; these are the socket's.
const TIMEOUT_CODES = new Set(['HTTP1_CONNECT_TIMEOUT', 'ETIMEDOUT']);

/**
 * A failure below HTTP (refused, reset, timed out) as a GatewayError. All are retryable on
 * another credential, except the caller's own abort, which nobody should retry.
 */
export function mapTransportError(error: unknown, upstreamId: string): GatewayError {
  if (isGatewayError(error)) return error;
  const code = errorCode(error);
  if (code !== undefined && TIMEOUT_CODES.has(code)) {
    return new GatewayError('upstream_timeout', `Upstream ${upstreamId} timed out (${code}).`, { cause: error });
  }
  if (code === 'HTTP1_PROTOCOL') {
    return new GatewayError('upstream_invalid_response', `Upstream ${upstreamId} sent an invalid HTTP response (${(error as Error).message}).`, { cause: error });
  }
  if (isAbort(error)) {
    return new GatewayError('upstream_error', `Request to upstream ${upstreamId} was aborted.`, { cause: error, retryable: false });
  }
  return new GatewayError('upstream_error', `Upstream ${upstreamId} could not be reached (${code ?? 'connection failed'}).`, { cause: error });
}

function errorCode(error: unknown): string | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const { code, cause } = error as { code?: unknown; cause?: unknown };
  if (typeof code === 'string') return code;
  return cause === undefined ? undefined : errorCode(cause);
}

function isAbort(error: unknown): boolean {
  return error instanceof Error && error.name === 'AbortError';
}
