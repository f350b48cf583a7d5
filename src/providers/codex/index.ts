import { ConfigError, type UpstreamConfig } from '../../config/index.js';
import type { AccountContext, AccountDocument, ProviderModule } from '../provider-adapter.js';
import { readUpstreamKeys } from '../shared/upstream-keys.js';
import { CodexAccount } from './codex-account.js';
import { CodexAuthStore } from './codex-auth-store.js';
import { parseCodexAuth } from './codex-tokens.js';
import { FileAccountDocument } from './file-account-document.js';
import { createCodexAdapter } from './codex-adapter.js';
import { CODEX_UPSTREAM_KEYS, DEFAULT_CODEX_REFRESH_TIMEOUT_MS } from './codex-upstream-keys.js';

export { CodexAccount } from './codex-account.js';
export { CodexAuthStore, type CodexTokenStore } from './codex-auth-store.js';
export { parseCodexAuth, type CodexTokens } from './codex-tokens.js';

/**
 * An account: added at run time, its document comes from the database; configured, from its
 * auth.json, read now, so that a missing or broken file stops the start naming the entry.
 */
async function codexAccount(entry: UpstreamConfig, context: AccountContext, document?: AccountDocument): Promise<CodexAccount> {
  const { auth_file: authFile, refresh_timeout_ms: refreshTimeoutMs = DEFAULT_CODEX_REFRESH_TIMEOUT_MS } = readUpstreamKeys(entry, CODEX_UPSTREAM_KEYS);
  if (document === undefined && authFile === undefined) {
    throw new ConfigError('auth_file', 'is required for a codex upstream: the Codex auth.json of the account (`codex login` writes ~/.codex/auth.json)');
  }
  const store = new CodexAuthStore(document ?? new FileAccountDocument(authFile as string));
  try {
    // A request waiting on another's refresh waits out that refresh's whole call, and its own.
    return new CodexAccount(entry.id, await store.load(), store, context, Date.now, { lockWaitMs: 2 * refreshTimeoutMs });
  } catch (error) {
    throw new ConfigError('auth_file', (error as Error).message);
  }
}

/** A document worth storing: an auth.json with tokens and an account. */
function checkCodexDocument(text: string): { accountId: string } {
  return { accountId: parseCodexAuth(text).accountId };
}

export const codexProvider: ProviderModule = {
  upstreamKeys: CODEX_UPSTREAM_KEYS,
  create: createCodexAdapter,
  account: codexAccount,
  checkAccountDocument: checkCodexDocument,
};
