import { Type, type Static } from '@sinclair/typebox';
import type { Limits } from '../store/index.js';

const count = (description: string) => Type.Optional(Type.Integer({ minimum: 1, description }));
const dollars = (description: string) => Type.Optional(Type.Number({ exclusiveMinimum: 0, description }));

/**
 * Rate limits and quotas as the admin API and the CLI take and show them (snake_case, as the
 * rest of the wire format). Each is optional; a token, a project and a team may each have any,
 * and the strictest in force applies. Counts are positive integers; dollar quotas are positive
 * numbers (cents matter).
 */
export const LimitsSchema = Type.Object(
  {
    rpm: count('requests per minute'),
    tpm: count('tokens (prompt + completion) per minute'),
    max_concurrent: count('requests in flight at once'),
    tokens_per_day: count('tokens per UTC day'),
    tokens_per_month: count('tokens per UTC month'),
    tokens_total: count('tokens in all, never reset'),
    usd_per_day: dollars('US dollars per UTC day, from models[].price'),
    usd_per_month: dollars('US dollars per UTC month, from models[].price'),
  },
  { additionalProperties: false },
);

export type WireLimits = Static<typeof LimitsSchema>;

/** The wire name of each limit, in the order they are listed. */
export const LIMIT_FIELDS = {
  rpm: 'rpm',
  tpm: 'tpm',
  maxConcurrent: 'max_concurrent',
  tokensPerDay: 'tokens_per_day',
  tokensPerMonth: 'tokens_per_month',
  tokensTotal: 'tokens_total',
  usdPerDay: 'usd_per_day',
  usdPerMonth: 'usd_per_month',
} as const satisfies Record<keyof Limits, keyof WireLimits>;

/** Limits (or changes to them) from their wire names to the store's; only the ones given. */
export function limitsFromWire<Value>(wire: { [Field in keyof WireLimits]?: Value }): { [Name in keyof Limits]?: Value } {
  const limits: { [Name in keyof Limits]?: Value } = {};
  for (const [name, field] of Object.entries(LIMIT_FIELDS) as [keyof Limits, keyof WireLimits][]) {
    const value = wire[field];
    if (value !== undefined) limits[name] = value;
  }
  return limits;
}

export function limitsToWire(limits: Limits): WireLimits {
  const wire: WireLimits = {};
  for (const [name, field] of Object.entries(LIMIT_FIELDS) as [keyof Limits, keyof WireLimits][]) {
    const value = limits[name];
    if (value !== undefined) wire[field] = value;
  }
  return wire;
}
