import { SCOPES, type CreatedToken, type TokenService } from '../access/index.js';

/**
 * On the very first start (no token exists at all) makes an admin token, so that a fresh install
 * can be used — and other tokens created — without touching the CLI. Never again afterwards, and
 * once between replicas starting together on an empty database.
 */
export function ensureBootstrapToken(tokens: TokenService): Promise<CreatedToken | null> {
  return tokens.createFirst({ team: 'admin', name: 'bootstrap', scopes: [...SCOPES] });
}
