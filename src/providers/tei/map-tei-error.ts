import type { ErrorDialect } from '../shared/classify-upstream-failure.js';
import type { TeiErrorBody } from './tei-api.js';

/**
 * What a TEI error body says (`{"error", "error_type"}`). 413 (too many inputs) and 422 (input
 * too long) are the caller's; 429 is TEI over `--max-concurrent-requests`; 424 (inference failed)
 * and 503 (unhealthy) are its own failures: the shared table's classes all fit.
 */
export const teiErrorDialect: ErrorDialect = {
  read(_status, bodyText) {
    return { message: teiErrorMessage(bodyText) ?? undefined };
  },
};

function teiErrorMessage(bodyText: string): string | null {
  try {
    const body = JSON.parse(bodyText) as TeiErrorBody | null;
    if (typeof body === 'object' && body !== null && typeof body.error === 'string') return body.error;
  } catch {
    // Not JSON: the raw text is the message.
  }
  return null;
}
