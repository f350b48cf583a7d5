const UNITS: Record<string, number> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/** The form config durations must have; the schema checks it, `parseDuration` reads it. */
export const DURATION_PATTERN = '^\\s*[1-9]\\d*\\s*(ms|s|m|h|d|w)\\s*$';

/** `250ms`, `45s`, `90m`, `12h`, `30d`, `2w` → milliseconds; null when the text is none of those (or zero). */
export function parseDuration(text: string): number | null {
  const match = /^(\d+)\s*(ms|s|m|h|d|w)$/.exec(text.trim());
  if (match === null) return null;
  const amount = Number(match[1]);
  const unit = UNITS[match[2] as string] as number;
  return amount > 0 ? amount * unit : null;
}
