import { parseJsonObject } from '../../core/index.js';
import type { ErrorDialect } from '../shared/classify-upstream-failure.js';

/**
 * What the ChatGPT backend's error bodies say: OpenAI's envelope (`{"error": {type, code,
 * message, …}}`) or FastAPI's (`{"detail": "…"}`). A `usage_limit_reached` is the account's
 * subscription spent until `resets_at` (unix seconds; else `resets_in_seconds`): a quota with a
 * reset time, which the router honours.
 */
export function codexErrorDialect(now: () => number = Date.now): ErrorDialect {
  return {
    read(_status, bodyText) {
      const body = parseJsonObject(bodyText);
      if (body === null) return null;
      const detail = body['detail'];
      const error = body['error'];
      if (error === null || typeof error !== 'object') return typeof detail === 'string' ? { message: detail } : null;
      const fields = error as Record<string, unknown>;
      const message = typeof fields['message'] === 'string' ? fields['message'] : undefined;
      const param = typeof fields['param'] === 'string' ? fields['param'] : null;
      if (fields['type'] !== 'usage_limit_reached' && fields['code'] !== 'usage_limit_reached') return { message, param };
      return { message: message ?? 'usage limit reached', class: 'quota', retryAfterSeconds: secondsUntilReset(fields, now()) };
    },
  };
}

function secondsUntilReset(error: Record<string, unknown>, now: number): number | undefined {
  const resetsAt = error['resets_at'];
  if (typeof resetsAt === 'number' && Number.isFinite(resetsAt)) return Math.max(1, Math.ceil(resetsAt - now / 1_000));
  const resetsIn = error['resets_in_seconds'];
  if (typeof resetsIn === 'number' && Number.isFinite(resetsIn)) return Math.max(1, Math.ceil(resetsIn));
  return undefined;
}
