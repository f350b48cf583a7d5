import { isGatewayError } from '../errors/index.js';
import { CliFailure, EXIT_USAGE } from './cli-io.js';

/**
 * A service's refusal as the CLI reports it: bad input (400, 422) exits 64, the field named in the
 * message; a conflict or a missing record (404, 409) exits 1. Anything else is left as it is.
 */
export function asCliFailure(error: unknown): unknown {
  if (!isGatewayError(error)) return error;
  return new CliFailure(error.message, error.status === 400 || error.status === 422 ? EXIT_USAGE : 1);
}

/** Runs a service call, its refusals turned into CLI failures. */
export async function refusalsAsFailures<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    throw asCliFailure(error);
  }
}
