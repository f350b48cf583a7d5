import { open, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseCodexAuth, type CodexTokens } from './codex-tokens.js';

/** Where an account's tokens live between uses: read when they may have changed elsewhere, written after a refresh. */
export interface CodexTokenStore {
  /** Names the store in logs and errors (a path, a database row), never its contents. */
  readonly description: string;
  load(): Promise<CodexTokens>;
  save(tokens: CodexTokens): Promise<void>;
}

/**
 * A Codex auth.json, as `codex login` writes it. Saving keeps whatever else the document holds
 * (`auth_mode`, `OPENAI_API_KEY`, keys of later Codex versions), replaces the tokens and
 * `last_refresh`, and is atomic: a new file of mode 0600 beside it, synced, then renamed over it,
 * so a crash or a reader at the wrong moment never sees half a file.
 */
export class CodexAuthFile implements CodexTokenStore {
  readonly description: string;

  constructor(private readonly path: string) {
    this.description = `auth file ${path}`;
  }

  async load(): Promise<CodexTokens> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      throw new Error(`${this.path} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
    try {
      return parseCodexAuth(text);
    } catch (error) {
      throw new Error(`${this.path} ${(error as Error).message}`);
    }
  }

  async save(tokens: CodexTokens): Promise<void> {
    let document: Record<string, unknown> = {};
    try {
      const parsed = JSON.parse(await readFile(this.path, 'utf8')) as unknown;
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) document = parsed as Record<string, unknown>;
    } catch {
      // An unreadable file is replaced by a complete one.
    }
    const previous = document['tokens'] !== null && typeof document['tokens'] === 'object' ? (document['tokens'] as Record<string, unknown>) : {};
    const updated = {
      ...document,
      auth_mode: document['auth_mode'] ?? 'chatgpt',
      tokens: { ...previous, id_token: tokens.idToken ?? previous['id_token'] ?? null, access_token: tokens.accessToken, refresh_token: tokens.refreshToken, account_id: tokens.accountId },
      last_refresh: new Date(tokens.lastRefresh ?? Date.now()).toISOString(),
    };
    await writeAtomically(this.path, `${JSON.stringify(updated, null, 2)}\n`);
  }
}

async function writeAtomically(path: string, text: string): Promise<void> {
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temporary, 'wx', 0o600);
  try {
    await handle.writeFile(text, 'utf8');
    await handle.sync();
  } catch (error) {
    await handle.close();
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
  await handle.close();
  try {
    await rename(temporary, path);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
}
