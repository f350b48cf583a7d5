import { ConfigError, type UpstreamConfig } from '../../config/index.js';
import type { AccountContext, ProviderModule } from '../provider-adapter.js';
import { readUpstreamKeys } from '../shared/upstream-keys.js';
import { CodexAccount } from './codex-account.js';
import { CodexAuthFile } from './codex-auth-file.js';
import { createCodexAdapter } from './codex-adapter.js';
import { CODEX_UPSTREAM_KEYS } from './codex-upstream-keys.js';

export { CodexAccount } from './codex-account.js';
export { CodexAuthFile, type CodexTokenStore } from './codex-auth-file.js';
export { parseCodexAuth, type CodexTokens } from './codex-tokens.js';

/** A configured account: its auth.json, read now, so that a missing or broken file stops the start naming the entry. */
async function codexAccount(entry: UpstreamConfig, context: AccountContext): Promise<CodexAccount> {
  const { auth_file: authFile } = readUpstreamKeys(entry, CODEX_UPSTREAM_KEYS);
  if (authFile === undefined) throw new ConfigError('auth_file', 'is required for a codex upstream: the Codex auth.json of the account (`codex login` writes ~/.codex/auth.json)');
  const store = new CodexAuthFile(authFile);
  try {
    return new CodexAccount(entry.id, await store.load(), store, context);
  } catch (error) {
    throw new ConfigError('auth_file', (error as Error).message);
  }
}

export const codexProvider: ProviderModule = { upstreamKeys: CODEX_UPSTREAM_KEYS, create: createCodexAdapter, account: codexAccount };
