import { Type, type Static } from '@sinclair/typebox';
import type { LimitChanges } from '../store/index.js';
import { limitsFromWire } from './limits-schema.js';

const count = (description: string) =>
  Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: `${description}; null removes it` }));
const dollars = (description: string) =>
  Type.Optional(Type.Union([Type.Number({ exclusiveMinimum: 0 }), Type.Null()], { description: `${description}; null removes it` }));

/**
 * A change to limits in `PATCH` bodies, as a JSON merge patch (RFC 7396): a value sets that
 * limit, null removes it, a limit not named is kept. The values follow LimitsSchema.
 */
export const LimitChangesSchema = Type.Object(
  {
    rpm: count('requests per minute'),
    tpm: count('tokens (prompt + completion) per minute'),
    max_concurrent: count('requests in flight at once'),
    tokens_per_day: count('tokens per UTC day'),
    tokens_per_month: count('tokens per UTC month'),
    tokens_total: count('tokens in all, never reset'),
    usd_per_day: dollars('US dollars per UTC day'),
    usd_per_month: dollars('US dollars per UTC month'),
  },
  { additionalProperties: false },
);

export type WireLimitChanges = Static<typeof LimitChangesSchema>;

/** A merge patch from its wire names to the store's: a null (remove) is kept as such. */
export function limitChangesFromWire(wire: WireLimitChanges): LimitChanges {
  return limitsFromWire<number | null>(wire);
}
