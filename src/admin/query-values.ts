import { invalidField } from '../access/input-checks.js';
import { STATUS_PATTERN, TIME_PATTERN } from './request-schemas.js';

/**
 * Values of the admin API's query strings (and of the CLI's flags, which say the same things),
 * checked past what a schema can say: a real calendar date, a status class. Each refusal is a 422
 * naming the parameter, as a body field's would be.
 */

const TIME = new RegExp(TIME_PATTERN);
const STATUS = new RegExp(STATUS_PATTERN);

/** `2025-06-01` (midnight UTC) or `2025-06-01T12:30:00Z` / `…+02:00` → epoch milliseconds. */
export function parseTime(parameter: string, value: string): number {
  const milliseconds = TIME.test(value) && realDate(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(milliseconds)) {
    throw invalidField(
      ['query', parameter],
      `Input should be an ISO 8601 date or date-time with a time zone (2025-06-01 or 2025-06-01T12:00:00Z), got "${value}"`,
      'datetime_parsing',
    );
  }
  return milliseconds;
}

/** Date.parse rolls 2025-02-30 over to March 2; a caller who wrote it made a mistake. */
function realDate(value: string): boolean {
  const [year, month, day] = value.slice(0, 10).split('-').map(Number) as [number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** `429` is that status; `5xx` (or `5XX`) every status of the class; null for anything else. */
export function statusRange(value: string): { from: number; to: number } | null {
  if (!STATUS.test(value)) return null;
  const first = Number(value[0]) * 100;
  return /x/i.test(value) ? { from: first, to: first + 99 } : { from: Number(value), to: Number(value) };
}

export function parseStatus(parameter: string, value: string): { from: number; to: number } {
  const range = statusRange(value);
  if (range === null) throw invalidField(['query', parameter], `expected a status such as 429 or a class such as 5xx, got "${value}"`);
  return range;
}
