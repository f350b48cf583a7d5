import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { AccountContext } from '../provider-adapter.js';
import { CodexAccount } from './codex-account.js';
import { CodexAuthStore, type CodexTokenStore } from './codex-auth-store.js';
import { FileAccountDocument } from './file-account-document.js';
import type { CodexTokens } from './codex-tokens.js';
import { RefreshRejectedError } from './codex-token-refresh.js';

function jwt(payload: Record<string, unknown>): string {
  return `${Buffer.from('{"alg":"RS256"}').toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.signature`;
}

const now = Date.parse('2026-11-24T12:00:00Z');

function tokens(serial: number, expiresAt: number): CodexTokens {
  return { idToken: null, accessToken: jwt({ exp: expiresAt / 1_000, serial }), refreshToken: `rt-${serial}`, accountId: 'acct-1', lastRefresh: now - 60_000 };
}

/** A store in memory that another "process" may change behind the account's back. */
class MemoryStore implements CodexTokenStore {
  readonly description = 'memory';
  saves = 0;
  constructor(public tokens: CodexTokens) {}
  async load(): Promise<CodexTokens> {
    return this.tokens;
  }
  async save(tokens: CodexTokens): Promise<void> {
    this.saves++;
    this.tokens = tokens;
  }
}

function context(notes: string[] = []): AccountContext {
  let tail: Promise<unknown> = Promise.resolve();
  return {
    // One process's lock: tasks run one after another.
    exclusive: (_name, task) => {
      const run = tail.then(async () => task({ confirm: async () => undefined }));
      tail = run.catch(() => undefined);
      return run;
    },
    note: (_level, _fields, message) => notes.push(message),
  };
}

describe('CodexAccount', () => {
  it('refreshes once for any number of concurrent requests whose token is about to expire', async () => {
    const store = new MemoryStore(tokens(1, now + 60_000));
    const account = new CodexAccount('a', store.tokens, store, context(), () => now);
    let refreshes = 0;
    const refresher = async (current: CodexTokens) => {
      refreshes++;
      expect(current.refreshToken).toBe('rt-1');
      await sleep(20);
      return { ...tokens(2, now + 3_600_000), lastRefresh: now };
    };
    const grants = await Promise.all(Array.from({ length: 50 }, () => account.grant(refresher)));
    expect(refreshes).toBe(1);
    expect(store.saves).toBe(1);
    expect(new Set(grants.map((grant) => grant.accessToken))).toEqual(new Set([tokens(2, now + 3_600_000).accessToken]));
  });

  it('takes tokens another process refreshed instead of spending the refresh token again', async () => {
    const store = new MemoryStore(tokens(1, now + 3_600_000));
    const notes: string[] = [];
    const account = new CodexAccount('a', store.tokens, store, context(notes), () => now);
    const refused = store.tokens.accessToken;
    store.tokens = tokens(2, now + 3_600_000);
    const grant = await account.renew(refused, async () => {
      throw new Error('must not refresh');
    });
    expect(grant.accessToken).toBe(store.tokens.accessToken);
    expect(notes).toContain('codex tokens refreshed elsewhere; taken from the store');
  });

  it('keeps using a live token while the token endpoint is away, and fails once it has expired', async () => {
    const away = async () => {
      throw new Error('connect ECONNREFUSED');
    };
    const live = new MemoryStore(tokens(1, now + 60_000));
    const notes: string[] = [];
    const account = new CodexAccount('a', live.tokens, live, context(notes), () => now);
    await expect(account.grant(away)).resolves.toMatchObject({ accessToken: live.tokens.accessToken });
    expect(notes).toContain('codex token refresh failed; the current access token is used until it expires');
    const expired = new MemoryStore(tokens(1, now - 1));
    await expect(new CodexAccount('b', expired.tokens, expired, context(), () => now).grant(away)).rejects.toThrow('ECONNREFUSED');
  });

  it('passes a dead refresh token on, and a later request tries again rather than reusing a promise', async () => {
    const store = new MemoryStore(tokens(1, now - 1));
    const account = new CodexAccount('a', store.tokens, store, context(), () => now);
    const dead = async () => {
      throw new RefreshRejectedError('refresh_token_reused', 401, 'the token endpoint refused the refresh token (refresh_token_reused)');
    };
    await expect(account.grant(dead)).rejects.toBeInstanceOf(RefreshRejectedError);
    await expect(account.grant(async () => ({ ...tokens(2, now + 3_600_000), lastRefresh: now }))).resolves.toMatchObject({ accountId: 'acct-1' });
  });

  it('takes the lock again and reads the store again when the lock was lost before spending the refresh token', async () => {
    const store = new MemoryStore(tokens(1, now - 1));
    const notes: string[] = [];
    let held = 0;
    const losing: AccountContext = {
      exclusive: async (_name, task) => {
        held++;
        return task({
          // The first hold's lease ran out, and another process refreshed meanwhile.
          confirm: async () => {
            if (held > 1) return;
            store.tokens = tokens(2, now + 3_600_000);
            throw new Error('the lock was lost: its lease ran out and another holder may have it');
          },
        });
      },
      note: (_level, _fields, message) => notes.push(message),
    };
    const account = new CodexAccount('a', store.tokens, store, losing, () => now);
    const grant = await account.grant(async () => {
      throw new Error('must not refresh');
    });
    expect(grant.accessToken).toBe(tokens(2, now + 3_600_000).accessToken);
    expect(held).toBe(2);
    expect(notes).toContain('codex tokens refreshed elsewhere; taken from the store');
  });

  it('takes the tokens of the process that spent the refresh token first, when the store has them', async () => {
    const store = new MemoryStore(tokens(1, now - 1));
    const account = new CodexAccount('a', store.tokens, store, context(), () => now);
    const grant = await account.grant(async () => {
      store.tokens = tokens(2, now + 3_600_000);
      throw new RefreshRejectedError('refresh_token_reused', 401, 'the token endpoint refused the refresh token (refresh_token_reused)');
    });
    expect(grant.accessToken).toBe(tokens(2, now + 3_600_000).accessToken);
  });

  it('says the refresh lock could not be taken when the lock fails, not what the state backend said', async () => {
    const store = new MemoryStore(tokens(1, now - 1));
    const down: AccountContext = {
      exclusive: async () => Promise.reject(new Error('shared state unavailable', { cause: new Error('Connection is closed.') })),
      note: () => undefined,
    };
    await expect(new CodexAccount('a', store.tokens, store, down, () => now).grant(async () => store.tokens)).rejects.toThrow(
      /^could not take the refresh lock: shared state unavailable$/,
    );
  });

  it('keeps the x-codex quota headers of the last answer, and never shows a token', () => {
    const store = new MemoryStore(tokens(1, now + 3_600_000));
    const account = new CodexAccount('a', store.tokens, store, context(), () => now);
    account.noteQuota({ 'x-codex-primary-used-percent': '42', 'x-codex-turn-state': 'opaque', 'content-type': 'text/event-stream' });
    const described = account.describe();
    expect(described).toMatchObject({ account_id: 'acct-1', quota: { 'x-codex-primary-used-percent': '42' }, quota_reported_at: new Date(now).toISOString() });
    expect(JSON.stringify(described)).not.toContain('rt-1');
    expect(JSON.stringify(described)).not.toContain(store.tokens.accessToken);
  });

  it('says each quota window as the share used, and when its access token expires, for the metrics', () => {
    const expiresAt = now + 3_600_000;
    const store = new MemoryStore(tokens(1, expiresAt));
    const account = new CodexAccount('a', store.tokens, store, context(), () => now);
    expect(account.quotaUse()).toEqual([]);
    account.noteQuota({ 'x-codex-primary-used-percent': '42', 'x-codex-secondary-used-percent': '7.5', 'x-codex-primary-window-minutes': '300' });
    expect(account.quotaUse()).toEqual([
      { window: 'primary', usedRatio: 0.42 },
      { window: 'secondary', usedRatio: 0.075 },
    ]);
    // The token says it in seconds (a JWT's `exp`): within a millisecond of it.
    expect(Math.abs((account.tokenExpiresAt() as number) - expiresAt)).toBeLessThanOrEqual(1);
  });
});

describe('CodexAuthStore over a file', () => {
  it('writes refreshed tokens back atomically at mode 0600, keeping the rest of the document', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'switchyard-codex-'));
    const path = join(directory, 'auth.json');
    await writeFile(
      path,
      JSON.stringify({
        auth_mode: 'chatgpt',
        OPENAI_API_KEY: null,
        tokens: { id_token: 'id', access_token: 'at', refresh_token: 'rt', account_id: 'acct-1' },
        last_refresh: '2026-11-01T00:00:00Z',
        extra: 1,
      }),
      { mode: 0o644 },
    );
    const file = new CodexAuthStore(new FileAccountDocument(path));
    const loaded = await file.load();
    await file.save({ ...loaded, accessToken: 'at-2', refreshToken: 'rt-2', lastRefresh: now });
    const written = JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;
    expect(written).toEqual({
      auth_mode: 'chatgpt',
      OPENAI_API_KEY: null,
      tokens: { id_token: 'id', access_token: 'at-2', refresh_token: 'rt-2', account_id: 'acct-1' },
      last_refresh: new Date(now).toISOString(),
      extra: 1,
    });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    await expect(new CodexAuthStore(new FileAccountDocument(join(directory, 'missing.json'))).load()).rejects.toThrow(/missing.json cannot be read \(ENOENT\)/);
  });
});
