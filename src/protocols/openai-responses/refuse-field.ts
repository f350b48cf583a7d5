import { GatewayError } from '../../errors/index.js';

/**
 * The 400 for a request the gateway cannot serve faithfully over a chat completions upstream. It
 * names the field, as OpenAI's own 400s do in `param`, so a client can see what to drop.
 */
export function refuseField(param: string, message: string): GatewayError {
  return new GatewayError('invalid_body', message, { param });
}
