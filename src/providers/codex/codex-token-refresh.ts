import { asObject, parseJsonObject } from '../../core/index.js';
import { GatewayError } from '../../errors/index.js';
import type { Attempt, Credential } from '../provider-adapter.js';
import type { UpstreamClient } from '../shared/upstream-client.js';
import { classifyTransport } from '../shared/classify-upstream-failure.js';
import { accountClaims, type CodexTokens } from './codex-tokens.js';
import { CODEX_CLIENT_ID } from './codex-upstream-keys.js';

/** Refresh errors after which the refresh token will never work again: the account must log in anew. */
const PERMANENT_CODES = new Set(['refresh_token_expired', 'refresh_token_reused', 'refresh_token_invalidated', 'invalid_grant']);

/** The token endpoint refused the refresh token for good. */
export class RefreshRejectedError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'RefreshRejectedError';
  }
}

/**
 * One refresh at the token endpoint, as Codex CLI does it. The answer may rotate the refresh token
 * (then the old one is spent: a second use gets `refresh_token_reused`) and may omit tokens that
 * did not change. Throws RefreshRejectedError when the refresh token is dead, a GatewayError when
 * the endpoint could not be reached, failed for a while or did not answer within `timeoutMs`.
 *
 * Never cancelled with the request that started it (other requests wait for the same refresh, and
 * the tokens it gets must be kept even if that client leaves); only its own timeout stops it,
 * which keeps it shorter than the refresh lock's lease.
 */
export async function refreshCodexTokens(
  client: UpstreamClient,
  credential: Credential,
  tokens: CodexTokens,
  now: number,
  timeoutMs: number,
): Promise<CodexTokens> {
  const attempt: Attempt = { credential, answered: () => undefined };
  const cancellation = AbortSignal.timeout(timeoutMs);
  const body = JSON.stringify({ client_id: CODEX_CLIENT_ID, grant_type: 'refresh_token', refresh_token: tokens.refreshToken, scope: 'openid profile email' });
  let response;
  try {
    response = await client.requestBuffered({
      path: '',
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body,
      cancellation,
      attempt,
    });
  } catch (error) {
    if (cancellation.aborted) {
      const message = `the token endpoint did not answer within ${timeoutMs} ms`;
      throw new GatewayError('upstream_timeout', `Upstream ${credential.id}: ${message}.`, {
        cause: error,
        upstream: { class: 'timeout', status: null, retryAfterSeconds: null, rateLimitHeaders: {}, credentialId: credential.id, message },
      });
    }
    throw classifyTransport(error, credential.id);
  }
  const text = response.body.toString('utf8');
  if (response.statusCode < 200 || response.statusCode >= 300) {
    const code = errorCode(text);
    if ((response.statusCode === 400 || response.statusCode === 401) && code !== null && PERMANENT_CODES.has(code)) {
      throw new RefreshRejectedError(code, response.statusCode, `the token endpoint refused the refresh token (${code})`);
    }
    throw new Error(`the token endpoint answered ${response.statusCode}${code === null ? '' : ` (${code})`}`);
  }
  const answer = parseJsonObject(text);
  const accessToken = stringField(answer, 'access_token') ?? tokens.accessToken;
  if (answer === null || accessToken === tokens.accessToken) throw new Error('the token endpoint answered without a new access token');
  const idToken = stringField(answer, 'id_token') ?? tokens.idToken;
  return {
    idToken,
    accessToken,
    refreshToken: stringField(answer, 'refresh_token') ?? tokens.refreshToken,
    accountId: (idToken === null ? null : accountClaims(idToken).accountId) ?? tokens.accountId,
    lastRefresh: now,
  };
}

function stringField(object: Record<string, unknown> | null, key: string): string | null {
  const value = object?.[key];
  return typeof value === 'string' && value !== '' ? value : null;
}

/** `{"error":{"code":…}}`, `{"error":"…"}` (OAuth's own shape) or `{"code":…}`. */
function errorCode(text: string): string | null {
  const body = parseJsonObject(text);
  if (body === null) return null;
  const error = body['error'];
  if (typeof error === 'string') return error;
  const code = asObject(error)?.['code'];
  if (typeof code === 'string') return code;
  return stringField(body, 'code');
}
