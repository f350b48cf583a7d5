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
    Type.String({
      minLength: 1,
      documentedDefault: 'required',
      description:
        "the account's Codex `auth.json` (what `codex login` writes to `~/.codex/auth.json`), relative to the config file; read at start (a missing or broken file stops the start naming the entry), refreshed tokens are written back to it atomically at mode 0600. Entries that differ only in it share one endpoint",
    }),
  ),
  token_url: Type.Optional(
    Type.String({
      pattern: '^https?://',
      documentedDefault: `\`${DEFAULT_CODEX_TOKEN_URL}\``,
      description: `where its tokens are refreshed; \`base_url\` defaults to \`${DEFAULT_CODEX_BASE_URL}\` (requests go to \`{base_url}/responses\`)`,
    }),
  ),
  refresh_timeout_ms: Type.Optional(
    Type.Integer({
      minimum: 1,
      documentedDefault: `\`${DEFAULT_CODEX_REFRESH_TIMEOUT_MS}\``,
      description:
        'how long one call to the token endpoint may take (its own bound, not `timeouts.first_byte_ms`); keep it below `state.lock_lease_ms` (docs/native-passthrough.md)',
    }),
  ),
};
