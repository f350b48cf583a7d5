import type { GatewayError } from '../../errors/index.js';

/**
 * OpenAI's `error` stream event for a failure after the stream began. Its fields are at the top
 * level, as the published schema says, and again under `error`, as OpenAI's live API sends them:
 * the official SDKs raise an `APIError` on that object, and readers of either shape find the
 * code and message. The `sequence_number` is the sender's to add.
 */
export function responsesErrorEvent(error: GatewayError): { type: 'error' } & Record<string, unknown> {
  const fields = { code: error.code, message: error.message, param: error.param };
  return { type: 'error', ...fields, error: { type: error.type, ...fields } };
}
