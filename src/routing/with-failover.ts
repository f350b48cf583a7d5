import { GatewayError, isGatewayError } from '../errors/index.js';
import type { Cancellation } from '../providers/provider-adapter.js';
import type { Route } from './model-catalog.js';

export interface Attempt<T> {
  value: T;
  route: Route;
}

/**
 * Tries `operation` on each route in order until one succeeds. A retryable failure moves on to
 * the next route; anything else, or the last route's failure, is thrown. `attempted` is told of
 * each route tried, so the request log names the upstream even when all of them failed.
 */
export async function withFailover<T>(
  routes: readonly Route[],
  cancellation: Cancellation,
  operation: (route: Route) => Promise<T>,
  attempted: (route: Route) => void,
): Promise<Attempt<T>> {
  let lastError: unknown;
  for (const route of routes) {
    attempted(route);
    try {
      return { value: await operation(route), route };
    } catch (error) {
      lastError = error;
      if (cancellation.cancelled || !isGatewayError(error) || !error.retryable) throw error;
    }
  }
  // Built only here: an Error captures a stack trace, too costly to make on every request.
  throw lastError ?? new GatewayError('no_upstream_available', 'No upstream is configured for this model.');
}
