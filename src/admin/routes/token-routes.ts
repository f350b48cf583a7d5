import { Type } from '@sinclair/typebox';
import { invalidField, parseDuration, type TokenService, type TokenUpdate } from '../../access/index.js';
import { limitChangesFromWire } from '../../api/limit-changes-schema.js';
import { limitsFromWire } from '../../api/limits-schema.js';
import { ListSchema, listBody, PageQueryProperties, PathId } from '../../api/list-wire.js';
import {
  CreatedTokenSchema,
  NewTokenSchema,
  TokenSchema,
  tokenToWire,
  TokenUpdateSchema,
  type NewTokenBody,
  type TokenUpdateBody,
} from '../../api/token-wire.js';
import type { TokenRecord } from '../../store/index.js';
import type { AdminRoute } from '../admin-route.js';

/** When each token's newest logged request started (RequestLogSearch.lastUsed). */
export type LastUsed = (tokenIds: readonly string[]) => Promise<ReadonlyMap<string, number>>;
import { pageRequest } from './route-parts.js';

const TokenParams = Type.Object({ id: PathId('the token id (tok_…)') });
const TokenListQuery = Type.Object(
  {
    ...PageQueryProperties,
    team: Type.Optional(PathId('only tokens of this team')),
    project: Type.Optional(PathId('only tokens of this project (with team)')),
  },
  { additionalProperties: false },
);

/** `expires_in` (a duration) or `expires_at` (ISO 8601, null: never) as the service takes them. */
function expiry(body: { expires_in?: string; expires_at?: string | null }): Pick<TokenUpdate, 'expiresAt' | 'expiresInMs'> {
  const asked: Pick<TokenUpdate, 'expiresAt' | 'expiresInMs'> = {};
  // The schema has checked the duration's form; 0 (never valid) lets the service say what is wrong.
  if (body.expires_in !== undefined) asked.expiresInMs = parseDuration(body.expires_in) ?? 0;
  if (body.expires_at === null) asked.expiresAt = null;
  else if (body.expires_at !== undefined) {
    const expiresAt = Date.parse(body.expires_at);
    if (Number.isNaN(expiresAt)) throw invalidField(['body', 'expires_at'], 'is not a valid time', 'datetime_parsing');
    asked.expiresAt = expiresAt;
  }
  return asked;
}

/**
 * Tokens (`/admin/v1/tokens…`), over the TokenService the CLI calls too. Only the create's
 * answer carries the secret; no answer ever carries its hash.
 */
export function tokenRoutes(tokens: TokenService, lastUsed: LastUsed): AdminRoute[] {
  const one = async (record: TokenRecord) => tokenToWire(record, (await lastUsed([record.id])).get(record.id) ?? null);
  return [
    {
      method: 'GET',
      path: '/admin/v1/tokens',
      operationId: 'listTokens',
      summary: 'List tokens in creation order (never their secrets)',
      tag: 'tokens',
      query: TokenListQuery,
      response: ListSchema(TokenSchema),
      handle: async (input) => {
        const { team, project } = input.query as { team?: string; project?: string };
        const page = await tokens.list({ ...pageRequest(input), ...(team === undefined ? {} : { team }), ...(project === undefined ? {} : { project }) });
        const used = await lastUsed(page.data.map((record) => record.id));
        return listBody(page, (record) => tokenToWire(record, used.get(record.id) ?? null));
      },
    },
    {
      method: 'POST',
      path: '/admin/v1/tokens',
      operationId: 'createToken',
      summary: 'Create a token; the answer carries its secret, this once',
      tag: 'tokens',
      body: NewTokenSchema,
      response: CreatedTokenSchema,
      status: 201,
      handle: async (input) => {
        const body = input.body as NewTokenBody;
        const created = await tokens.create({
          team: body.team,
          project: body.project ?? null,
          name: body.name ?? null,
          ...(body.scopes === undefined ? {} : { scopes: body.scopes }),
          models: body.models ?? null,
          ...expiry(body),
          ...(body.limits === undefined ? {} : { limits: limitsFromWire(body.limits) }),
        });
        return { ...tokenToWire(created.record, null), secret: created.secret };
      },
    },
    {
      method: 'GET',
      path: '/admin/v1/tokens/{id}',
      operationId: 'getToken',
      summary: 'Get a token (never its secret)',
      tag: 'tokens',
      params: TokenParams,
      response: TokenSchema,
      handle: async (input) => one(await tokens.get(input.params['id'] as string)),
    },
    {
      method: 'PATCH',
      path: '/admin/v1/tokens/{id}',
      operationId: 'updateToken',
      summary: "Change a token's name, scopes, models, expiry or limits (limits: a merge patch); a revoked token is refused with 422",
      tag: 'tokens',
      params: TokenParams,
      body: TokenUpdateSchema,
      response: TokenSchema,
      handle: async (input) => {
        const body = input.body as TokenUpdateBody;
        const changes: TokenUpdate = {
          ...(body.name === undefined ? {} : { name: body.name }),
          ...(body.scopes === undefined ? {} : { scopes: body.scopes }),
          ...(body.models === undefined ? {} : { models: body.models }),
          ...expiry(body),
          ...(body.limits === undefined ? {} : { limits: limitChangesFromWire(body.limits) }),
        };
        return one(await tokens.update(input.params['id'] as string, changes));
      },
    },
    {
      method: 'POST',
      path: '/admin/v1/tokens/{id}/revoke',
      operationId: 'revokeToken',
      summary: 'Revoke a token; refused from the next request on. Revoking twice keeps the first time',
      tag: 'tokens',
      params: TokenParams,
      response: TokenSchema,
      handle: async (input) => one(await tokens.revoke(input.params['id'] as string)),
    },
  ];
}
