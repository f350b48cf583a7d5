/** Display helpers. The API speaks UTC ISO; people read their own time zone. */

export const DASH = '—';

export function formatTime(iso: string | null | undefined): string {
  if (iso === null || iso === undefined) return DASH;
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

/** 1234 → 1.2k, 2500000 → 2.5M: for limits and axes, where the order of magnitude is what matters. */
export function compactNumber(value: number): string {
  const abs = Math.abs(value);
  const scaled = (divisor: number, suffix: string) => {
    const digits = value / divisor;
    return `${Number.isInteger(digits) ? digits : Number(digits.toFixed(abs / divisor >= 10 ? 0 : 1))}${suffix}`;
  };
  if (abs >= 1e9) return scaled(1e9, 'G');
  if (abs >= 1e6) return scaled(1e6, 'M');
  if (abs >= 1e3) return scaled(1e3, 'k');
  return String(Number.isInteger(value) ? value : Number(value.toFixed(2)));
}

export function formatCount(value: number | null | undefined): string {
  return value === null || value === undefined ? DASH : value.toLocaleString();
}

export function formatMs(value: number | null | undefined): string {
  if (value === null || value === undefined) return DASH;
  return value >= 10_000 ? `${(value / 1000).toFixed(1)} s` : `${Math.round(value).toLocaleString()} ms`;
}

export function formatUsd(value: number | null | undefined): string {
  if (value === null || value === undefined) return DASH;
  if (value === 0) return '$0';
  return value < 0.01 ? `$${value.toPrecision(2)}` : `$${value.toFixed(2)}`;
}

export function formatPercent(part: number, whole: number): string {
  if (whole === 0) return DASH;
  const percent = (part / whole) * 100;
  return `${percent < 10 && percent > 0 ? percent.toFixed(1) : Math.round(percent)}%`;
}

/** An ISO time as the value of an `<input type="datetime-local">`, in the browser's zone. */
export function isoToLocalInput(iso: string | null): string {
  if (iso === null || iso === '') return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** The other way: a local date and time (no zone) as UTC ISO, which the API requires. */
export function localInputToIso(value: string): string | null {
  if (value === '') return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}
