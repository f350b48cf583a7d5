import { asObject, parseJsonObject } from '../../core/index.js';

/**
 * A ChatGPT account as Codex CLI's auth.json holds it, and what its tokens say: when the access
 * token expires, which account it is, the plan. The id token's claims are read without checking
 * the signature: they come from our own file, and the upstream checks the token it is sent.
 */
export interface CodexTokens {
  readonly idToken: string | null;
  readonly accessToken: string;
  readonly refreshToken: string;
  /** `chatgpt-account-id`: from the file, else the id token's claim. */
  readonly accountId: string;
  /** When the tokens were last refreshed (ms since the epoch); null when the file does not say. */
  readonly lastRefresh: number | null;
}

export interface AccountClaims {
  readonly accountId: string | null;
  readonly planType: string | null;
}

const AUTH_CLAIM = 'https://api.openai.com/auth';
/** Refresh this long before the access token expires. */
export const REFRESH_MARGIN_MS = 5 * 60_000;
/** Refresh tokens that were not refreshed for this long, as Codex does. */
export const REFRESH_AFTER_MS = 8 * 24 * 3_600_000;

/** The tokens of a Codex auth.json (`{"tokens": {id_token, access_token, refresh_token, account_id}, "last_refresh"}`); throws naming what is missing. */
export function parseCodexAuth(text: string): CodexTokens {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    throw new Error('is not JSON (expected the auth.json Codex CLI writes after `codex login`)');
  }
  const tokens = (document as { tokens?: unknown } | null)?.tokens;
  if (tokens === null || typeof tokens !== 'object') throw new Error('has no "tokens" object (an API-key login has none: log in with ChatGPT)');
  const { id_token: idToken, access_token: accessToken, refresh_token: refreshToken, account_id: accountId } = tokens as Record<string, unknown>;
  if (typeof accessToken !== 'string' || accessToken === '') throw new Error('has no tokens.access_token');
  if (typeof refreshToken !== 'string' || refreshToken === '') throw new Error('has no tokens.refresh_token');
  const claims = typeof idToken === 'string' ? accountClaims(idToken) : null;
  const account = typeof accountId === 'string' && accountId !== '' ? accountId : claims?.accountId;
  if (account === null || account === undefined) throw new Error('has no tokens.account_id, and its id_token names no chatgpt_account_id');
  const lastRefresh = (document as { last_refresh?: unknown }).last_refresh;
  const refreshedAt = typeof lastRefresh === 'string' ? Date.parse(lastRefresh) : NaN;
  return {
    idToken: typeof idToken === 'string' ? idToken : null,
    accessToken,
    refreshToken,
    accountId: account,
    lastRefresh: Number.isNaN(refreshedAt) ? null : refreshedAt,
  };
}

/** The payload of a JWT, or null when the text is not one. */
export function jwtPayload(token: string): Record<string, unknown> | null {
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  return parseJsonObject(Buffer.from(parts[1] as string, 'base64url').toString('utf8'));
}

/** The account and plan an id token names (`https://api.openai.com/auth` → `chatgpt_account_id`, `chatgpt_plan_type`). */
export function accountClaims(idToken: string): AccountClaims {
  const auth = jwtPayload(idToken)?.[AUTH_CLAIM];
  const claims = asObject(auth) ?? {};
  const accountId = claims['chatgpt_account_id'];
  const planType = claims['chatgpt_plan_type'];
  return { accountId: typeof accountId === 'string' ? accountId : null, planType: typeof planType === 'string' ? planType : null };
}

/** When the access token expires (its `exp` claim), ISO 8601; null when it says none we can read. */
export function accessTokenExpiry(tokens: CodexTokens): string | null {
  const expiry = jwtPayload(tokens.accessToken)?.['exp'];
  return typeof expiry === 'number' && Number.isFinite(expiry) ? new Date(expiry * 1_000).toISOString() : null;
}

/** Whether the tokens must be refreshed before use: the access token expires within the margin (or says no expiry we can read), or the last refresh is too old. */
export function needsRefresh(tokens: CodexTokens, now: number): boolean {
  const expiry = jwtPayload(tokens.accessToken)?.['exp'];
  if (typeof expiry === 'number' && expiry * 1_000 - now <= REFRESH_MARGIN_MS) return true;
  return tokens.lastRefresh !== null && now - tokens.lastRefresh >= REFRESH_AFTER_MS;
}
