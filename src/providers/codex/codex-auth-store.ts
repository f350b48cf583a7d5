import { asObject, parseJsonObject } from '../../core/index.js';
import type { AccountDocument } from '../provider-adapter.js';
import { parseCodexAuth, type CodexTokens } from './codex-tokens.js';

/** Where an account's tokens live between uses: read when they may have changed elsewhere, written after a refresh. */
export interface CodexTokenStore {
  /** Names the store in logs and errors (a path, the database), never its contents. */
  readonly description: string;
  load(): Promise<CodexTokens>;
  save(tokens: CodexTokens): Promise<void>;
}

/**
 * The tokens of a Codex auth.json document, wherever it is kept (a file, the database). Saving
 * keeps whatever else the document holds (`auth_mode`, `OPENAI_API_KEY`, keys of later Codex
 * versions) and replaces the tokens and `last_refresh`.
 */
export class CodexAuthStore implements CodexTokenStore {
  readonly description: string;

  constructor(private readonly document: AccountDocument) {
    this.description = document.description;
  }

  async load(): Promise<CodexTokens> {
    const text = await this.document.read();
    try {
      return parseCodexAuth(text);
    } catch (error) {
      throw new Error(`${this.description} ${(error as Error).message}`);
    }
  }

  async save(tokens: CodexTokens): Promise<void> {
    let previous = '';
    try {
      previous = await this.document.read();
    } catch {
      // An unreadable document is replaced by a complete one.
    }
    await this.document.write(codexAuthText(tokens, previous));
  }
}

/** An auth.json with `tokens` and `last_refresh` replaced, the rest of `previous` kept. */
export function codexAuthText(tokens: CodexTokens, previous: string): string {
  // A previous document that is not a JSON object has nothing to keep.
  const document = parseJsonObject(previous) ?? {};
  const kept = asObject(document['tokens']) ?? {};
  const updated = {
    ...document,
    auth_mode: document['auth_mode'] ?? 'chatgpt',
    tokens: {
      ...kept,
      id_token: tokens.idToken ?? kept['id_token'] ?? null,
      access_token: tokens.accessToken,
      refresh_token: tokens.refreshToken,
      account_id: tokens.accountId,
    },
    last_refresh: new Date(tokens.lastRefresh ?? Date.now()).toISOString(),
  };
  return `${JSON.stringify(updated, null, 2)}\n`;
}
