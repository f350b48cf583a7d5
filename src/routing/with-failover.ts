import { GatewayError, isGatewayError } from '../errors/index.js';
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
  signal: AbortSignal,
  operation: (route: Route) => Promise<T>,
  attempted: (route: Route) => void,
): Promise<Attempt<T>> {
  let lastError: unknown = new GatewayError('no_upstream_available', 'No upstream is configured for this model.');
  for (const route of routes) {
    attempted(route);
    try {
      return { value: await operation(route), route };
    } catch (error) {
      lastError = error;
      if (signal.aborted || !isGatewayError(error) || !error.retryable) throw error;
    }
  }
  throw lastError;
}
