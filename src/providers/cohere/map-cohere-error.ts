import type { ErrorDialect } from '../shared/classify-upstream-failure.js';
import type { CohereErrorBody } from './cohere-api.js';

/**
 * What a Cohere error body says (`{"message"}`). 402 is an unpaid account (the shared table's
 * quota); 498 is Cohere blocking the request under its usage guidelines: it fails everywhere.
 */
export const cohereErrorDialect: ErrorDialect = {
  read(status, bodyText) {
    return { message: cohereErrorMessage(bodyText) ?? undefined, class: status === 498 ? 'caller' : undefined };
  },
};

function cohereErrorMessage(bodyText: string): string | null {
  try {
    const body = JSON.parse(bodyText) as CohereErrorBody | null;
    if (typeof body === 'object' && body !== null && typeof body.message === 'string') return body.message;
  } catch {
    // Not JSON (a proxy's HTML page, say): the raw text is the message.
  }
  return null;
}
