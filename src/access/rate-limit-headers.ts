import type { PlannedMeter } from './limit-plan.js';

/**
 * OpenAI's `x-ratelimit-*` headers for the tightest requests-per-minute and tokens-per-minute
 * limits in force (the one with the least left), from the values an admission read. Absent when
 * no such limit applies. `remaining-tokens` counts this request's reservation as spent.
 */
export function rateLimitHeaders(planned: readonly PlannedMeter[], values: readonly number[], now: number): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, suffix] of [['rpm', 'requests'], ['tpm', 'tokens']] as const) {
    let tightest: { limit: number; remaining: number; resetAt: number } | null = null;
    planned.forEach((entry, index) => {
      if (entry.name !== name) return;
      const remaining = Math.max(0, entry.limit - Math.ceil(values[index] ?? 0));
      if (tightest === null || remaining < tightest.remaining) tightest = { limit: entry.limit, remaining, resetAt: entry.periodEnd ?? now };
    });
    if (tightest === null) continue;
    const { limit, remaining, resetAt } = tightest as { limit: number; remaining: number; resetAt: number };
    headers[`x-ratelimit-limit-${suffix}`] = String(limit);
    headers[`x-ratelimit-remaining-${suffix}`] = String(remaining);
    headers[`x-ratelimit-reset-${suffix}`] = formatDuration(Math.max(0, resetAt - now));
  }
  return headers;
}

/** As OpenAI writes its resets: `20ms`, `1.5s`, `6m0s`. */
export function formatDuration(milliseconds: number): string {
  if (milliseconds < 1000) return `${Math.round(milliseconds)}ms`;
  const seconds = milliseconds / 1000;
  if (seconds < 60) return `${Number(seconds.toFixed(3))}s`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes}m${Number((seconds - minutes * 60).toFixed(3))}s`;
}
