import { describe, expect, it } from 'vitest';
import { accountClaims, needsRefresh, parseCodexAuth, REFRESH_AFTER_MS } from './codex-tokens.js';

function jwt(payload: Record<string, unknown>): string {
  return `${Buffer.from('{"alg":"RS256"}').toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.signature`;
}

const now = Date.parse('2026-11-24T12:00:00Z');
const idToken = jwt({ 'https://api.openai.com/auth': { chatgpt_account_id: 'acct-1', chatgpt_plan_type: 'plus' } });

function authFile(tokens: Record<string, unknown>, lastRefresh = '2026-11-20T12:00:00Z'): string {
  return JSON.stringify({ auth_mode: 'chatgpt', OPENAI_API_KEY: null, tokens, last_refresh: lastRefresh });
}

describe('Codex auth.json', () => {
  it('reads the tokens, the account (from the file, else the id token) and the last refresh', () => {
    const tokens = parseCodexAuth(authFile({ id_token: idToken, access_token: 'at', refresh_token: 'rt', account_id: 'acct-file' }));
    expect(tokens).toEqual({ idToken, accessToken: 'at', refreshToken: 'rt', accountId: 'acct-file', lastRefresh: Date.parse('2026-11-20T12:00:00Z') });
    expect(parseCodexAuth(authFile({ id_token: idToken, access_token: 'at', refresh_token: 'rt' })).accountId).toBe('acct-1');
    expect(accountClaims(idToken)).toEqual({ accountId: 'acct-1', planType: 'plus' });
    expect(accountClaims('not a jwt')).toEqual({ accountId: null, planType: null });
  });

  it('says what is missing', () => {
    expect(() => parseCodexAuth('{')).toThrow(/is not JSON/);
    expect(() => parseCodexAuth(JSON.stringify({ auth_mode: 'apikey', OPENAI_API_KEY: 'sk-x' }))).toThrow(/no "tokens" object/);
    expect(() => parseCodexAuth(authFile({ refresh_token: 'rt', account_id: 'a' }))).toThrow(/access_token/);
    expect(() => parseCodexAuth(authFile({ access_token: 'at', account_id: 'a' }))).toThrow(/refresh_token/);
    expect(() => parseCodexAuth(authFile({ access_token: 'at', refresh_token: 'rt' }))).toThrow(/account_id/);
  });

  it('needs a refresh within 5 minutes of expiry, or 8 days after the last one', () => {
    const fresh = (exp: number, lastRefresh = now) => ({
      idToken: null,
      accessToken: jwt({ exp: exp / 1_000 }),
      refreshToken: 'rt',
      accountId: 'a',
      lastRefresh,
    });
    expect(needsRefresh(fresh(now + 3_600_000), now)).toBe(false);
    expect(needsRefresh(fresh(now + 4 * 60_000), now)).toBe(true);
    expect(needsRefresh(fresh(now - 1), now)).toBe(true);
    expect(needsRefresh(fresh(now + 3_600_000, now - REFRESH_AFTER_MS), now)).toBe(true);
    expect(needsRefresh({ idToken: null, accessToken: 'opaque', refreshToken: 'rt', accountId: 'a', lastRefresh: null }, now)).toBe(false);
  });
});
