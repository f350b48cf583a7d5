import { Type } from '@sinclair/typebox';

/** ChatGPT's Codex backend: requests go to `{base_url}/responses`. */
export const DEFAULT_CODEX_BASE_URL = 'https://chatgpt.com/backend-api/codex';
/** Where Codex CLI refreshes its tokens. */
export const DEFAULT_CODEX_TOKEN_URL = 'https://auth.openai.com/oauth/token';
/** Codex CLI's OAuth client id: the tokens of a Codex login were issued to it, so only it may refresh them. */
export const CODEX_CLIENT_ID = 'app_EMoamEEZ73f0CkXaXp7hrann';

/** A `codex` upstream's own keys: one entry is one ChatGPT account. */
export const CODEX_UPSTREAM_KEYS = {
  auth_file: Type.Optional(
    Type.String({ minLength: 1, description: "the account's Codex auth.json (after `codex login`); refreshed tokens are written back to it" }),
  ),
  token_url: Type.Optional(Type.String({ pattern: '^https?://', description: `where tokens are refreshed (default ${DEFAULT_CODEX_TOKEN_URL})` })),
};
