import type { ErrorDialect } from '../shared/classify-upstream-failure.js';
import type { JinaErrorBody } from './jina-api.js';

/** What a Jina error body says (FastAPI's `detail`: a string, a validation list, or an object). 402 is an empty balance. */
export const jinaErrorDialect: ErrorDialect = {
  read(_status, bodyText) {
    return { message: jinaErrorMessage(bodyText) ?? undefined };
  },
};

function jinaErrorMessage(bodyText: string): string | null {
  let body: JinaErrorBody | null;
  try {
    body = JSON.parse(bodyText) as JinaErrorBody | null;
  } catch {
    // Not JSON: the raw text is the message.
    return null;
  }
  if (typeof body !== 'object' || body === null) return null;
  const { detail } = body;
  if (typeof detail === 'string') return detail;
  // FastAPI's validation list: say which fields, the way the upstream did.
  if (Array.isArray(detail)) {
    const issues = detail.flatMap((issue: unknown) => {
      if (typeof issue !== 'object' || issue === null) return [];
      const { loc, msg } = issue as { loc?: unknown; msg?: unknown };
      if (typeof msg !== 'string') return [];
      return [Array.isArray(loc) ? `${loc.join('.')}: ${msg}` : msg];
    });
    return issues.length > 0 ? issues.join('; ') : null;
  }
  if (typeof detail === 'object' && detail !== null && typeof (detail as { message?: unknown }).message === 'string') {
    return (detail as { message: string }).message;
  }
  return typeof body.message === 'string' ? body.message : null;
}
