import { Type, type Static } from '@sinclair/typebox';
import { DURATION_PATTERN } from '../core/duration.js';
import type { TokenRecord } from '../store/index.js';
import { LimitChangesSchema } from './limit-changes-schema.js';
import { LimitsSchema, limitsToWire } from './limits-schema.js';
import { IsoTime, isoTime } from './list-wire.js';

/** An absolute time a caller sends: ISO 8601 with a time and a zone (`2030-01-31T00:00:00Z`). */
const ISO_PATTERN = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2})$';

const Scopes = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
  minItems: 1,
  maxItems: 32,
  description: 'scopes; a new token gets every scope but admin without it',
});
const Models = Type.Union([Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 1_000 }), Type.Null()], {
  description: 'the model allow-list; null: every model',
});
const Name = Type.Union([Type.String({ maxLength: 200 }), Type.Null()], { description: 'a label to recognise the token by' });
const ExpiresIn = Type.String({ pattern: DURATION_PATTERN, description: 'a lifetime from now: 90m, 12h, 30d, 2w' });
const ExpiresAt = Type.Union([Type.String({ pattern: ISO_PATTERN }), Type.Null()], { description: 'when it expires (ISO 8601); null: never' });

/** `POST /admin/v1/tokens`. */
export const NewTokenSchema = Type.Object(
  {
    team: Type.String({ minLength: 1, maxLength: 200, description: 'made when missing' }),
    project: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()], { description: 'a project of the team; it must exist' })),
    name: Type.Optional(Name),
    scopes: Type.Optional(Scopes),
    models: Type.Optional(Models),
    expires_in: Type.Optional(ExpiresIn),
    expires_at: Type.Optional(ExpiresAt),
    limits: Type.Optional(LimitsSchema),
  },
  { additionalProperties: false },
);
export type NewTokenBody = Static<typeof NewTokenSchema>;

/** `PATCH /admin/v1/tokens/{id}`: absent fields are kept; `limits` is a merge patch. */
export const TokenUpdateSchema = Type.Object(
  {
    name: Type.Optional(Name),
    scopes: Type.Optional(Scopes),
    models: Type.Optional(Models),
    expires_in: Type.Optional(ExpiresIn),
    expires_at: Type.Optional(ExpiresAt),
    limits: Type.Optional(LimitChangesSchema),
  },
  { additionalProperties: false },
);
export type TokenUpdateBody = Static<typeof TokenUpdateSchema>;

/** A token as the admin API and `tokens list --json` show it: never its secret or its hash. */
export const TokenSchema = Type.Object(
  {
    id: Type.String(),
    status: Type.Union([Type.Literal('active'), Type.Literal('revoked'), Type.Literal('expired')]),
    name: Type.Union([Type.String(), Type.Null()]),
    team: Type.String(),
    project: Type.Union([Type.String(), Type.Null()]),
    prefix: Type.String({ description: 'the first characters of the token, to recognise it' }),
    scopes: Type.Array(Type.String()),
    models: Type.Union([Type.Array(Type.String()), Type.Null()]),
    limits: LimitsSchema,
    created_at: IsoTime('when it was created'),
    expires_at: Type.Union([IsoTime('when it expires'), Type.Null()]),
    revoked_at: Type.Union([IsoTime('when it was revoked'), Type.Null()]),
    last_used_at: Type.Optional(
      Type.Union([IsoTime('when its newest request in the request log started'), Type.Null()], { description: 'null: no request in the log' }),
    ),
  },
  { additionalProperties: false },
);
export type TokenBody = Static<typeof TokenSchema>;

/** The answer to a create: the token, and its secret this once. */
export const CreatedTokenSchema = Type.Object(
  { ...TokenSchema.properties, secret: Type.String({ description: 'the token itself: shown this once, never again' }) },
  { additionalProperties: false },
);
export type CreatedTokenBody = Static<typeof CreatedTokenSchema>;

export function tokenStatus(record: TokenRecord, now: number): TokenBody['status'] {
  if (record.revokedAt !== null) return 'revoked';
  return record.expiresAt !== null && record.expiresAt <= now ? 'expired' : 'active';
}

/** `lastUsedAt`: the start of the token's newest logged request (null: none); undefined leaves the field out. */
export function tokenToWire(record: TokenRecord, lastUsedAt?: number | null, now: number = Date.now()): TokenBody {
  const body: TokenBody = {
    id: record.id,
    status: tokenStatus(record, now),
    name: record.name,
    team: record.team,
    project: record.project,
    prefix: record.displayPrefix,
    scopes: record.scopes,
    models: record.models,
    limits: limitsToWire(record.limits),
    created_at: isoTime(record.createdAt),
    expires_at: record.expiresAt === null ? null : isoTime(record.expiresAt),
    revoked_at: record.revokedAt === null ? null : isoTime(record.revokedAt),
  };
  if (lastUsedAt !== undefined) body.last_used_at = lastUsedAt === null ? null : isoTime(lastUsedAt);
  return body;
}

/** An ISO 8601 time as milliseconds; null for null. The schema has checked its form, Date.parse its values. */
export function parseIsoTime(text: string | null): number | null {
  if (text === null) return null;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? Number.NaN : ms;
}
