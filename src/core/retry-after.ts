/**
 * Seconds, from either form RFC 9110 allows for `Retry-After`: delta-seconds or an HTTP date.
 * Every provider's answers carry it, so it lives here, not in one provider. A negative number is
 * neither form (and `Date.parse` would take it for a year).
 */
export function parseRetryAfter(header: string | undefined, now: number = Date.now()): number | undefined {
  if (header === undefined) return undefined;
  const trimmed = header.trim();
  if (/^-?\d+(\.\d+)?$/.test(trimmed)) {
    const seconds = Number(trimmed);
    return seconds >= 0 ? Math.ceil(seconds) : undefined;
  }
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}
