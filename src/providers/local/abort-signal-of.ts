import { GatewayError } from '../../errors/index.js';
import type { Cancellation } from '../../core/index.js';

/** Engines take the platform's AbortSignal; the gateway's Cancellation (one listener, cheap on the hot path) feeds one. */
export function abortSignalOf(cancellation: Cancellation): AbortSignal {
  const controller = new AbortController();
  cancellation.onCancel(() => controller.abort(new GatewayError('upstream_error', 'The client went away.')));
  return controller.signal;
}
