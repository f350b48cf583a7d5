import { SCOPES, type CreatedToken, type TokenService } from '../access/index.js';
import type { TokenStore } from '../store/index.js';

/**
 * On the very first start (no token exists at all) makes an admin token, so that a fresh install
 * can be used — and other tokens created — without touching the CLI. Never again afterwards.
 */
export async function ensureBootstrapToken(store: TokenStore, tokens: TokenService): Promise<CreatedToken | null> {
  if ((await store.list()).length > 0) return null;
  return tokens.create({ team: 'admin', name: 'bootstrap', scopes: [...SCOPES] });
}
