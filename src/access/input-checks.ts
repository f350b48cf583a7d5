import { validationError } from '../api/validation-issues.js';
import { LIMIT_FIELDS } from '../api/limits-schema.js';
import { ID_PATTERN } from '../api/team-wire.js';
import type { GatewayError } from '../errors/index.js';
import type { LimitChanges, Limits } from '../store/index.js';

/**
 * Where a field sits in an admin API request, as a 422 `detail` names it (`['body', 'limits',
 * 'rpm']`, `['path', 'team']`). The CLI shows the same field in the message.
 */
export type FieldLocation = readonly ['body' | 'path' | 'query', ...(string | number)[]];

/** A 422 naming one field, the shape every validation failure has. */
export function invalidField(loc: FieldLocation, msg: string, type = 'value_error'): GatewayError {
  return validationError([{ loc: [...loc], msg, type }]);
}

const ID = new RegExp(ID_PATTERN);

/** Ids the API and the CLI create (teams, projects, a token's team): ID_PATTERN (api/team-wire.ts says why). */
export function checkId(value: unknown, loc: FieldLocation): string {
  if (typeof value !== 'string' || !ID.test(value)) {
    throw invalidField(loc, 'must be 1 to 128 of A-Z a-z 0-9 . _ -, starting with a letter or digit', 'string_pattern_mismatch');
  }
  return value;
}

/** A display name: trimmed, 1 to 200 characters (the column's width). */
export function checkName(value: unknown, loc: FieldLocation): string {
  const name = typeof value === 'string' ? value.trim() : '';
  if (name === '' || name.length > 200) throw invalidField(loc, 'must be 1 to 200 characters', 'string_type');
  return name;
}

const COUNTS: ReadonlySet<keyof Limits> = new Set(['rpm', 'tpm', 'maxConcurrent', 'tokensPerDay', 'tokensPerMonth', 'tokensTotal']);

/** One limit's value: counts are positive integers (safe ones: counters add them), dollars positive finite numbers. */
function checkLimit(name: string, value: unknown, loc: FieldLocation): number {
  const field = Object.hasOwn(LIMIT_FIELDS, name) ? LIMIT_FIELDS[name as keyof Limits] : undefined;
  if (field === undefined) throw invalidField([...loc, name], 'Extra inputs are not permitted', 'extra_forbidden');
  const at: FieldLocation = [...loc, field];
  if (COUNTS.has(name as keyof Limits)) {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) throw invalidField(at, 'must be a positive integer', 'greater_than_equal');
  } else if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw invalidField(at, 'must be a positive number', 'greater_than');
  }
  return value;
}

export function checkLimits(limits: Limits, loc: FieldLocation): Limits {
  const checked: Limits = {};
  for (const [name, value] of Object.entries(limits)) {
    if (value !== undefined) checked[name as keyof Limits] = checkLimit(name, value, loc);
  }
  return checked;
}

/** As checkLimits; null (remove the limit) is allowed too. */
export function checkLimitChanges(changes: LimitChanges, loc: FieldLocation): LimitChanges {
  const checked: LimitChanges = {};
  for (const [name, value] of Object.entries(changes)) {
    if (value === null) checked[name as keyof Limits] = null;
    else if (value !== undefined) checked[name as keyof Limits] = checkLimit(name, value, loc);
  }
  return checked;
}
