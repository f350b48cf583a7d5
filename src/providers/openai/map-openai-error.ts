import { GatewayError } from '../../errors/index.js';
import type { ErrorDialect } from '../shared/classify-upstream-failure.js';
import type { OpenAIErrorBody, OpenAIErrorObject } from './openai-api.js';

/**
 * What an OpenAI-compatible error body says (`{"error": {message, type, code, param}}`, or a bare
 * message from servers that imitate it loosely). A 429 whose code is `insufficient_quota` is a
 * spent quota, not a rate limit: waiting does not help that credential.
 */
export const openAIErrorDialect: ErrorDialect = {
  read(status, bodyText) {
    const error = parseError(bodyText);
    if (error === null) return null;
    return {
      message: typeof error.message === 'string' ? error.message : undefined,
      param: typeof error.param === 'string' ? error.param : null,
      class: status === 429 && error.code === 'insufficient_quota' ? 'quota' : undefined,
    };
  },
};

/** An `error` object sent inside a stream after it started. */
export function mapOpenAIStreamError(error: OpenAIErrorObject | string, upstreamId: string): GatewayError {
  const message =
    typeof error === 'string' ? error : typeof error === 'object' && error !== null && typeof error.message === 'string' ? error.message : 'unknown error';
  return new GatewayError('upstream_error', `Upstream ${upstreamId} failed mid-stream: ${message}`);
}

function parseError(bodyText: string): OpenAIErrorObject | null {
  try {
    const body = JSON.parse(bodyText) as OpenAIErrorBody;
    if (typeof body.error === 'object' && body.error !== null) return body.error;
    if (typeof body.error === 'string') return { message: body.error };
    if (typeof body.message === 'string') return { message: body.message };
  } catch {
    // Not JSON: the raw text (trimmed) is the message.
  }
  return null;
}
