import { GatewayError, isGatewayError } from '../errors/index.js';
import type { Cancellation } from '../providers/provider-adapter.js';
import type { RequestRecord } from '../usage/index.js';
import type { Route } from './model-catalog.js';

export interface Attempt<T> {
  value: T;
  route: Route;
}

/**
 * Tries `operation` on each route in order until one succeeds. A retryable failure moves on to
 * the next route; anything else, or the last route's failure, is thrown. The record names the
 * credential tried last (the request log names it even when all of them failed) and keeps every
 * failed attempt, with its cause, for the request's log lines.
 */
export async function withFailover<T>(routes: readonly Route[], cancellation: Cancellation, record: RequestRecord, operation: (route: Route) => Promise<T>): Promise<Attempt<T>> {
  let lastError: unknown;
  for (const route of routes) {
    record.upstream = route.upstreamId;
    try {
      return { value: await operation(route), route };
    } catch (error) {
      lastError = error;
      if (cancellation.cancelled) throw error;
      record.noteUpstreamFailure(route.upstreamId, error);
      if (!isGatewayError(error) || !error.retryable) throw error;
    }
  }
  // Built only here: an Error captures a stack trace, too costly to make on every request.
  throw lastError ?? new GatewayError('no_upstream_available', 'No upstream is configured for this model.');
}
