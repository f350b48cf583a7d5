import type { Command } from 'commander';
import type { LimitChanges, Limits } from '../store/index.js';
import { LIMIT_FIELDS } from '../api/limits-schema.js';
import { CliFailure, EXIT_USAGE } from './cli-io.js';

/** The limit flags, named as the Limits they set (commander camel-cases `--max-concurrent` to `maxConcurrent`). */
const LIMIT_FLAGS: Record<keyof Limits, { flag: string; dollars: boolean; help: string }> = {
  rpm: { flag: '--rpm', dollars: false, help: 'requests per minute' },
  tpm: { flag: '--tpm', dollars: false, help: 'tokens (prompt + completion) per minute' },
  maxConcurrent: { flag: '--max-concurrent', dollars: false, help: 'requests in flight at once' },
  tokensPerDay: { flag: '--tokens-per-day', dollars: false, help: 'tokens per UTC day' },
  tokensPerMonth: { flag: '--tokens-per-month', dollars: false, help: 'tokens per UTC month' },
  tokensTotal: { flag: '--tokens-total', dollars: false, help: 'tokens in all, never reset' },
  usdPerDay: { flag: '--usd-per-day', dollars: true, help: 'US dollars per UTC day (models[].price)' },
  usdPerMonth: { flag: '--usd-per-month', dollars: true, help: 'US dollars per UTC month (models[].price)' },
};

export type LimitFlags = Partial<Record<keyof Limits, string>>;

/** Adds the eight limit flags; on an update each also takes `none`, which removes that limit. */
export function addLimitOptions(command: Command, clearable: boolean): Command {
  for (const { flag, dollars, help } of Object.values(LIMIT_FLAGS)) {
    command.option(`${flag} <${dollars ? 'usd' : 'n'}>`, clearable ? `${help}; none removes it` : help);
  }
  return command;
}

function parseLimit(name: keyof Limits, text: string, clearable: boolean): number | null {
  const { flag, dollars } = LIMIT_FLAGS[name];
  if (clearable && text.trim() === 'none') return null;
  const value = Number(text.trim());
  const valid = dollars
    ? /^\d+(\.\d+)?$/.test(text.trim()) && Number.isFinite(value) && value > 0
    : /^[1-9]\d*$/.test(text.trim()) && Number.isSafeInteger(value);
  if (!valid) throw new CliFailure(`${flag}: expected a positive ${dollars ? 'number' : 'integer'}${clearable ? ' or none' : ''}, got "${text}"`, EXIT_USAGE);
  return value;
}

/** The limits the flags set, for a create. */
export function limitsFromFlags(flags: LimitFlags): Limits {
  const limits: Limits = {};
  for (const name of Object.keys(LIMIT_FLAGS) as (keyof Limits)[]) {
    const text = flags[name];
    if (text !== undefined) limits[name] = parseLimit(name, text, false) as number;
  }
  return limits;
}

/** The change the flags make, for an update: a number sets a limit, `none` removes it, an absent flag keeps it. */
export function limitChangesFromFlags(flags: LimitFlags): LimitChanges {
  const changes: LimitChanges = {};
  for (const name of Object.keys(LIMIT_FLAGS) as (keyof Limits)[]) {
    const text = flags[name];
    if (text !== undefined) changes[name] = parseLimit(name, text, true);
  }
  return changes;
}

/** `rpm=600 tokens_per_month=5000000`, or `-` for none: one table cell. */
export function formatLimits(limits: Limits): string {
  const parts = (Object.entries(LIMIT_FIELDS) as [keyof Limits, string][])
    .filter(([name]) => limits[name] !== undefined)
    .map(([name, field]) => `${field}=${String(limits[name])}`);
  return parts.length === 0 ? '-' : parts.join(' ');
}
