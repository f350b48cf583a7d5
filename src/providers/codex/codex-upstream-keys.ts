import { Type } from '@sinclair/typebox';

/** ChatGPT's Codex backend: requests go to `{base_url}/responses`. */
export const DEFAULT_CODEX_BASE_URL = 'https://chatgpt.com/backend-api/codex';
/** Where Codex CLI refreshes its tokens. */
export const DEFAULT_CODEX_TOKEN_URL = 'https://auth.openai.com/oauth/token';
/** Codex CLI's OAuth client id: the tokens of a Codex login were issued to it, so only it may refresh them. */
export const CODEX_CLIENT_ID = 'app_EMoamEEZ73f0CkXaXp7hrann';

/**
 * How long one call to the token endpoint may take. Shorter than the refresh lock's lease
 * (`state.lock_lease_ms`, 60 s), so that a holder whose renewals fail (the state away) still ends
 * its call within the lease it had when it began: no other process can take the lock meanwhile.
 */
export const DEFAULT_CODEX_REFRESH_TIMEOUT_MS = 30_000;

/** A `codex` upstream's own keys: one entry is one ChatGPT account. */
export const CODEX_UPSTREAM_KEYS = {
  auth_file: Type.Optional(
    Type.String({ minLength: 1, description: "the account's Codex auth.json (after `codex login`); refreshed tokens are written back to it" }),
  ),
  token_url: Type.Optional(Type.String({ pattern: '^https?://', description: `where tokens are refreshed (default ${DEFAULT_CODEX_TOKEN_URL})` })),
  refresh_timeout_ms: Type.Optional(
    Type.Integer({ minimum: 1, description: `how long one refresh at the token endpoint may take (default ${DEFAULT_CODEX_REFRESH_TIMEOUT_MS}); keep it below state.lock_lease_ms` }),
  ),
};
