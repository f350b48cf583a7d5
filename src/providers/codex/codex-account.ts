import type { IncomingHttpHeaders } from 'node:http';
import type { AccountContext, AccountLock, CredentialAccount } from '../provider-adapter.js';
import type { CodexTokenStore } from './codex-auth-store.js';
import { RefreshRejectedError } from './codex-token-refresh.js';
import { accessTokenExpiry, accountClaims, jwtPayload, needsRefresh, type CodexTokens } from './codex-tokens.js';

/** What a request sends: the access token and the account it belongs to. */
export interface CodexGrant {
  readonly accessToken: string;
  readonly accountId: string;
}

/** Refreshes the tokens once at the token endpoint; the account decides when, and that only one runs. */
export type CodexRefresher = (tokens: CodexTokens) => Promise<CodexTokens>;

const QUOTA_HEADER = /^x-codex-/;
/** A quota window's share used, in percent: `x-codex-primary-used-percent`, `x-codex-secondary-used-percent`. */
const USED_PERCENT_HEADER = /^x-codex-([a-z0-9]+)-used-percent$/;

export interface CodexAccountOptions {
  /** How long a refresh waits for another process's refresh of the same account (at least two leases of the lock whatever it says). */
  lockWaitMs?: number;
}

/** Where a refresh was when it failed: before the lock was taken, while confirming it, or after. */
type RefreshStep = 'locking' | 'reading' | 'confirming' | 'refreshing';

/**
 * One ChatGPT account: its tokens, kept fresh, and its quota as the backend last reported it.
 *
 * A refresh token may be spent once: two refreshes of one account at the same time get the
 * second `refresh_token_reused`, and the account is lost until someone logs in again. So every
 * refresh of an account runs alone — one promise per process, which concurrent requests share,
 * inside a lock shared by every gateway process on the same state — and begins by reading the
 * store again: when another process refreshed while this one waited, its tokens are taken
 * instead of refreshing a second time. The lock is renewed while the refresh runs and confirmed
 * just before the refresh token is spent; a holder that finds it lost takes it again and reads
 * the store again.
 */
export class CodexAccount implements CredentialAccount {
  private tokens: CodexTokens;
  private refreshing: Promise<CodexTokens> | null = null;
  private quota: Record<string, string> = {};
  private quotaAt: number | null = null;

  constructor(
    readonly id: string,
    tokens: CodexTokens,
    private readonly store: CodexTokenStore,
    private readonly context: AccountContext,
    private readonly now: () => number = Date.now,
    private readonly options: CodexAccountOptions = {},
  ) {
    this.tokens = tokens;
  }

  /** The tokens to send now: refreshed first when the access token is about to expire or the last refresh is old. */
  async grant(refresher: CodexRefresher): Promise<CodexGrant> {
    if (needsRefresh(this.tokens, this.now())) {
      const stale = this.tokens;
      try {
        await this.renew(stale.accessToken, refresher);
      } catch (error) {
        // A token that has not expired yet still works while the token endpoint is away.
        if (!accessTokenLive(stale, this.now())) throw error;
        this.context.note('warn', { credential: this.id, err: error }, 'codex token refresh failed; the current access token is used until it expires');
      }
    }
    return { accessToken: this.tokens.accessToken, accountId: this.tokens.accountId };
  }

  /**
   * New tokens after `refused` stopped working (an upstream 401) or is about to: refreshes
   * unless another request or process already did, and resolves when the account's tokens are
   * newer than `refused`.
   */
  async renew(refused: string, refresher: CodexRefresher): Promise<CodexGrant> {
    if (this.tokens.accessToken !== refused) return { accessToken: this.tokens.accessToken, accountId: this.tokens.accountId };
    this.refreshing ??= this.refreshAlone(refused, refresher).finally(() => {
      this.refreshing = null;
    });
    const tokens = await this.refreshing;
    return { accessToken: tokens.accessToken, accountId: tokens.accountId };
  }

  /** Keeps the backend's `x-codex-*` quota headers of an answer, whatever its status. */
  noteQuota(headers: IncomingHttpHeaders): void {
    let found: Record<string, string> | null = null;
    for (const name in headers) {
      if (!QUOTA_HEADER.test(name) || name === 'x-codex-turn-state') continue;
      const value = headers[name];
      if (value === undefined) continue;
      found ??= {};
      found[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    if (found === null) return;
    this.quota = found;
    this.quotaAt = this.now();
  }

  async reload(): Promise<void> {
    const stored = await this.store.load();
    if (stored.accessToken !== this.tokens.accessToken || stored.refreshToken !== this.tokens.refreshToken) this.tokens = stored;
  }

  describe(): Readonly<Record<string, unknown>> {
    const { accountId, planType } = this.tokens.idToken === null ? { accountId: null, planType: null } : accountClaims(this.tokens.idToken);
    return {
      account_id: accountId ?? this.tokens.accountId,
      plan_type: planType,
      token_store: this.store.description,
      last_refresh: this.tokens.lastRefresh === null ? null : new Date(this.tokens.lastRefresh).toISOString(),
      access_token_expires_at: accessTokenExpiry(this.tokens),
      quota: this.quota,
      quota_reported_at: this.quotaAt === null ? null : new Date(this.quotaAt).toISOString(),
    };
  }

  quotaUse(): ReadonlyArray<{ readonly window: string; readonly usedRatio: number }> {
    const windows = [];
    for (const [name, value] of Object.entries(this.quota)) {
      const window = USED_PERCENT_HEADER.exec(name)?.[1];
      const percent = Number(value);
      if (window !== undefined && value.trim() !== '' && Number.isFinite(percent)) windows.push({ window, usedRatio: percent / 100 });
    }
    return windows;
  }

  tokenExpiresAt(): number | null {
    const expiry = accessTokenExpiry(this.tokens);
    return expiry === null ? null : Date.parse(expiry);
  }

  /**
   * One refresh under the lock. A lock found lost just before the refresh token would be spent
   * (its lease ran out: another process may be refreshing) is taken once more, and the store read
   * again under it, rather than spending a token another process may be spending.
   */
  private async refreshAlone(refused: string, refresher: CodexRefresher): Promise<CodexTokens> {
    for (let tries = 1; ; tries++) {
      let step: RefreshStep = 'locking';
      try {
        return await this.context.exclusive(
          `codex-refresh:${this.id}`,
          async (lock) =>
            this.refreshHolding(refused, refresher, lock, (reached) => {
              step = reached;
            }),
          { waitMs: this.options.lockWaitMs },
        );
      } catch (error) {
        const reached = step as RefreshStep;
        // Said as what failed: the lock, not the state backend's own words.
        if (reached === 'locking') throw new Error(`could not take the refresh lock: ${(error as Error).message}`, { cause: error });
        if (reached !== 'confirming') throw error;
        if (tries >= 2) throw new Error(`could not keep the refresh lock: ${(error as Error).message}`, { cause: error });
        this.context.note('warn', { credential: this.id, err: error }, 'the codex refresh lock was lost before refreshing; taking it again');
      }
    }
  }

  private async refreshHolding(refused: string, refresher: CodexRefresher, lock: AccountLock, reach: (step: RefreshStep) => void): Promise<CodexTokens> {
    reach('reading');
    const stored = await this.store.load();
    if (stored.accessToken !== refused && !needsRefresh(stored, this.now())) {
      this.tokens = stored;
      this.context.note('info', { credential: this.id, store: this.store.description }, 'codex tokens refreshed elsewhere; taken from the store');
      return stored;
    }
    reach('confirming');
    await lock.confirm();
    reach('refreshing');
    let fresh: CodexTokens;
    try {
      fresh = await refresher(stored);
    } catch (error) {
      const spentElsewhere = await this.spentElsewhere(error, stored);
      if (spentElsewhere === null) throw error;
      return spentElsewhere;
    }
    // Kept in memory before the write: should the write fail, this process still uses the
    // tokens that are now the only valid ones. Kept whatever became of the lock meanwhile: the
    // old refresh token is spent, so these are the account's tokens now.
    this.tokens = fresh;
    try {
      await this.store.save(fresh);
    } catch (error) {
      this.context.note('warn', { credential: this.id, store: this.store.description, err: error }, 'refreshed codex tokens could not be written back');
    }
    this.context.note(
      'info',
      { credential: this.id, store: this.store.description, rotated: fresh.refreshToken !== stored.refreshToken },
      'codex tokens refreshed',
    );
    return fresh;
  }

  /**
   * After the token endpoint said the refresh token was already used: the tokens of whoever used
   * it, when the store has them by now, instead of taking the account out of service. Null when
   * the store still holds the spent token (the refusal stands).
   */
  private async spentElsewhere(error: unknown, spent: CodexTokens): Promise<CodexTokens | null> {
    if (!(error instanceof RefreshRejectedError) || error.code !== 'refresh_token_reused') return null;
    const stored = await this.store.load().catch(() => null);
    if (stored === null || stored.refreshToken === spent.refreshToken) return null;
    this.tokens = stored;
    this.context.note(
      'warn',
      { credential: this.id, store: this.store.description },
      'codex refresh token was spent by another process; its tokens are taken from the store',
    );
    return stored;
  }
}

function accessTokenLive(tokens: CodexTokens, now: number): boolean {
  const expiry = jwtPayload(tokens.accessToken)?.['exp'];
  return typeof expiry === 'number' && expiry * 1_000 > now;
}
