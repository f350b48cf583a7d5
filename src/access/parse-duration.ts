const UNITS: Record<string, number> = {
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/** `30d`, `12h`, `90m`, `45s`, `2w` → milliseconds; null when the text is none of those. */
export function parseDuration(text: string): number | null {
  const match = /^(\d+)\s*([smhdw])$/.exec(text.trim());
  if (match === null) return null;
  const amount = Number(match[1]);
  const unit = UNITS[match[2] as string] as number;
  return amount > 0 ? amount * unit : null;
}
