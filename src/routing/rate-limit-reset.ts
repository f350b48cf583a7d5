/**
 * When a rate-limited credential may be used again, read from the upstream's rate-limit headers
 * (used when its answer carried no `Retry-After`):
 * - OpenAI: `x-ratelimit-remaining-requests` / `-tokens` with `x-ratelimit-reset-requests` /
 *   `-tokens` as Go durations (`1s`, `6m0s`, `20ms`, `1h2m3.5s`);
 * - Anthropic: `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-remaining` with
 *   `…-reset` as RFC 3339 times.
 * The limits that are spent (remaining 0) decide, the latest of them; when none says it is spent,
 * the earliest reset (the next probe then finds out). Milliseconds from `now`; null when the
 * headers say nothing usable.
 */
export function rateLimitResetMs(headers: Readonly<Record<string, string>>, now: number): number | null {
  const spent: number[] = [];
  const all: number[] = [];
  for (const [name, value] of Object.entries(headers)) {
    const limit = resetLimitName(name);
    if (limit === null) continue;
    const delay = name.startsWith('anthropic-') ? untilTime(value, now) : goDurationMs(value);
    if (delay === null) continue;
    all.push(delay);
    if (headers[limit.remainingHeader]?.trim() === '0') spent.push(delay);
  }
  if (spent.length > 0) return Math.max(...spent);
  return all.length > 0 ? Math.min(...all) : null;
}

function resetLimitName(name: string): { remainingHeader: string } | null {
  const openAI = /^x-ratelimit-reset-(requests|tokens)$/.exec(name);
  if (openAI !== null) return { remainingHeader: `x-ratelimit-remaining-${openAI[1]}` };
  const anthropic = /^anthropic-ratelimit-([a-z-]+)-reset$/.exec(name);
  if (anthropic !== null) return { remainingHeader: `anthropic-ratelimit-${anthropic[1]}-remaining` };
  return null;
}

const GO_UNITS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1, us: 0.001, µs: 0.001, ns: 0.000_001 };

/** A Go duration (`1h2m3.5s`, `20ms`, `0s`) in milliseconds, rounded up; null when it is not one. */
export function goDurationMs(text: string): number | null {
  const trimmed = text.trim();
  if (!/^(\d+(\.\d+)?(h|ms|m|s|us|µs|ns))+$/.test(trimmed)) return null;
  let total = 0;
  for (const [, amount, unit] of trimmed.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/g)) total += Number(amount) * (GO_UNITS[unit as string] as number);
  return Math.ceil(total);
}

function untilTime(text: string, now: number): number | null {
  const time = Date.parse(text.trim());
  return Number.isNaN(time) ? null : Math.max(0, time - now);
}
