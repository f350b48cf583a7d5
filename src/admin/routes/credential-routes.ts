import { Type } from '@sinclair/typebox';
import { ListSchema, listBody, PathId } from '../../api/list-wire.js';
import { NewAccountRequestSchema, type NewAccountRequest } from '../../api/new-account-request.js';
import type { AdminRoute } from '../admin-route.js';
import type { CredentialAdmin } from '../credential-admin.js';
import type { UpstreamAccounts } from '../upstream-accounts.js';
import { DeletedSchema } from './route-parts.js';

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

/** A credential as CredentialAdmin shows it (its CredentialView). */
export const CredentialSchema = Type.Object(
  {
    id: Type.String(),
    provider: Type.String(),
    state: Type.Union(['healthy', 'cooling', 'failed', 'disabled'].map((state) => Type.Literal(state))),
    until: Nullable(
      Type.String({ description: 'when a cooldown ends (ISO 8601); null in the other states and while the probe that ends a cooldown is under way' }),
    ),
    reason: Nullable(Type.String()),
    since: Nullable(Type.String({ description: 'when it entered its state (ISO 8601); null: healthy since the start' })),
    cooldowns_in_a_row: Type.Integer({ minimum: 0 }),
    in_flight: Type.Integer({ minimum: 0, description: 'requests in flight on it, in every gateway process sharing the state' }),
    last_error: Nullable(Type.String()),
    recent: Type.Object(
      {
        window_seconds: Type.Integer({ minimum: 1 }),
        attempts: Type.Integer({ minimum: 0 }),
        failures: Type.Integer({ minimum: 0, description: 'attempts that failed through the credential (not the caller, not a bug)' }),
        mean_ms: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
          description: "the mean time to the upstream's answer (its head, for a stream) of the attempts that did not fail through the credential; null: none",
        }),
      },
      { additionalProperties: false, description: 'attempts on it lately, as this gateway process counted them: the recent error rate is failures / attempts' },
    ),
    origin: Type.Union([Type.Literal('config'), Type.Literal('runtime')]),
    account: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], { description: "an OAuth account's own state; null for API keys" }),
  },
  { additionalProperties: false },
);

/** An account added at run time (its StoredAccountView): never its tokens. */
export const StoredAccountSchema = Type.Object(
  {
    id: Type.String(),
    provider: Type.String(),
    account_id: Nullable(Type.String()),
    base_url: Nullable(Type.String()),
    token_url: Nullable(Type.String()),
    created_at: Type.String(),
    updated_at: Type.String(),
  },
  { additionalProperties: false },
);

const CredentialParams = Type.Object({ id: PathId('the credential id (an upstreams[] entry, or an account added at run time)') });

const ACTIONS = {
  disable: 'Take a credential out of routing until enabled',
  enable: 'Put a disabled credential back into routing',
  reset: 'End a cooldown or a failure; the backoff starts over',
} as const;

/**
 * The upstream credentials (`/admin/v1/credentials…`) and the accounts added at run time
 * (`/admin/v1/accounts`). A change answers with the credential as it now is; an account added
 * is stored sealed and served within seconds by every gateway process.
 */
export function credentialRoutes(credentials: CredentialAdmin, accounts: UpstreamAccounts): AdminRoute[] {
  const actions = (Object.keys(ACTIONS) as (keyof typeof ACTIONS)[]).map(
    (action): AdminRoute => ({
      method: 'POST',
      path: `/admin/v1/credentials/{id}/${action}`,
      operationId: `${action}Credential`,
      summary: ACTIONS[action],
      tag: 'credentials',
      params: CredentialParams,
      response: CredentialSchema,
      handle: (input) => credentials[action](input.params['id'] as string),
    }),
  );
  return [
    {
      method: 'GET',
      path: '/admin/v1/credentials',
      operationId: 'listCredentials',
      summary: 'List the upstream credentials and their states',
      tag: 'credentials',
      response: ListSchema(CredentialSchema),
      handle: () => listBody({ data: credentials.list(), nextCursor: null }, (view) => view),
    },
    {
      method: 'GET',
      path: '/admin/v1/credentials/{id}',
      operationId: 'getCredential',
      summary: 'Get an upstream credential and its state',
      tag: 'credentials',
      params: CredentialParams,
      response: CredentialSchema,
      handle: (input) => credentials.get(input.params['id'] as string),
    },
    ...actions,
    {
      method: 'POST',
      path: '/admin/v1/credentials',
      operationId: 'addCredential',
      summary: 'Add an account at run time (provider codex: a Codex auth.json), stored sealed under SWITCHYARD_SECRET_KEY',
      tag: 'credentials',
      body: NewAccountRequestSchema,
      response: StoredAccountSchema,
      status: 201,
      handle: (input) => {
        const body = input.body as NewAccountRequest;
        return accounts.add({
          id: body.id,
          provider: body.provider,
          document: typeof body.auth === 'string' ? body.auth : JSON.stringify(body.auth),
          ...(body.base_url === undefined ? {} : { baseUrl: body.base_url }),
          ...(body.token_url === undefined ? {} : { tokenUrl: body.token_url }),
        });
      },
    },
    {
      method: 'DELETE',
      path: '/admin/v1/credentials/{id}',
      operationId: 'removeCredential',
      summary: 'Remove an account added at run time (a configured upstream is removed from the config file: 409)',
      tag: 'credentials',
      params: CredentialParams,
      response: DeletedSchema,
      handle: async (input) => {
        await accounts.remove(input.params['id'] as string);
        return { id: input.params['id'] as string, deleted: true };
      },
    },
    {
      method: 'GET',
      path: '/admin/v1/accounts',
      operationId: 'listAccounts',
      summary: 'List the accounts added at run time (never their tokens)',
      tag: 'credentials',
      response: ListSchema(StoredAccountSchema),
      handle: async () => listBody({ data: await accounts.list(), nextCursor: null }, (view) => view),
    },
  ];
}
