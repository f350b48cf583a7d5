import type { PlannedMeter } from './limit-plan.js';

/**
 * OpenAI's `x-ratelimit-*` headers for the tightest requests-per-minute and tokens-per-minute
 * limits in force (the one with the least left), from the values an admission read, as a flat
 * `[name, value, …]` list. Empty when no such limit applies. `remaining-tokens` counts this
 * request's reservation as spent.
 */
export function rateLimitHeaders(planned: readonly PlannedMeter[], values: readonly number[], now: number): string[] {
  const headers: string[] = [];
  appendTightest(headers, planned, values, now, 'rpm', 'requests');
  appendTightest(headers, planned, values, now, 'tpm', 'tokens');
  return headers;
}

function appendTightest(
  headers: string[],
  planned: readonly PlannedMeter[],
  values: readonly number[],
  now: number,
  name: 'rpm' | 'tpm',
  suffix: string,
): void {
  let tightest = -1;
  let least = Number.POSITIVE_INFINITY;
  for (let index = 0; index < planned.length; index++) {
    const entry = planned[index] as PlannedMeter;
    if (entry.name !== name) continue;
    const remaining = Math.max(0, entry.limit - Math.ceil(values[index] ?? 0));
    if (remaining < least) {
      least = remaining;
      tightest = index;
    }
  }
  const entry = planned[tightest];
  if (entry === undefined) return;
  headers.push(
    `x-ratelimit-limit-${suffix}`,
    String(entry.limit),
    `x-ratelimit-remaining-${suffix}`,
    String(least),
    `x-ratelimit-reset-${suffix}`,
    formatDuration(Math.max(0, (entry.periodEnd ?? now) - now)),
  );
}

/** As OpenAI writes its resets: `20ms`, `1.5s`, `6m0s` (integer arithmetic: it is on every response). */
export function formatDuration(milliseconds: number): string {
  const total = Math.round(milliseconds);
  if (total < 1000) return `${total}ms`;
  const minutes = Math.floor(total / 60_000);
  const rest = total - minutes * 60_000;
  const fraction = rest % 1000;
  const seconds = fraction === 0 ? `${(rest - fraction) / 1000}s` : `${(rest - fraction) / 1000}.${String(fraction).padStart(3, '0').replace(/0+$/, '')}s`;
  return minutes === 0 ? seconds : `${minutes}m${seconds}`;
}
