import { GatewayError } from '../errors/index.js';
import type { TokenChangeWatcher, TokenRecord, TokenStore } from '../store/index.js';
import { holdersOf, type HolderLimits, type LimitHolder } from './limit-holders.js';
import type { Scope } from './scopes.js';
import { digestsEqual, hashSecret, looksLikeToken, SECRET_LENGTH } from './token-secret.js';

/** Who is calling, resolved once per request from the bearer token. */
export interface Principal {
  readonly tokenId: string;
  readonly team: string;
  readonly project: string | null;
  readonly scopes: ReadonlySet<Scope>;
  /** null: every model. */
  readonly models: ReadonlySet<string> | null;
  readonly expiresAt: number | null;
  readonly revokedAt: number | null;
  /** sha256 of the token, hex. */
  readonly hash: string;
  /** Whose rate limits and quotas the request counts against (token, project, team); empty when none has any. */
  readonly holders: readonly LimitHolder[];
}

const RELOAD_RETRY_MS = 1_000;
const NO_HOLDER_LIMITS: HolderLimits = { teams: new Map(), projects: new Map() };

/**
 * Answers "who is this?" from memory. Every token is held in a map keyed by its hash, so an
 * unknown token costs the same as a known one and never reaches the database; the map is
 * reloaded when the change watcher says another process changed the tokens table.
 */
export class TokenAuthenticator {
  private byHash = new Map<string, Principal>();
  private reloading: Promise<void> | null = null;
  /** Hashes recently looked up in the database and not found, with when to forget them. */
  private readonly unknown = new Map<string, number>();
  private lookupBudget = MISS_LOOKUPS_PER_SECOND;
  private budgetRefilledAt = 0;
  private holderLimits: HolderLimits = NO_HOLDER_LIMITS;

  /** The teams' and projects' limits, as of the last load of the tokens. */
  get limitsOfHolders(): HolderLimits {
    return this.holderLimits;
  }
  /** A reload failed: when to try it again (the change it was for was taken from the watcher). */
  private reloadAgainAt = Number.POSITIVE_INFINITY;

  constructor(
    private readonly store: TokenStore,
    private readonly watcher: TokenChangeWatcher,
    private readonly prefix: string,
    private readonly now: () => number = Date.now,
    /** The limits of teams and projects, carried with each token (a change to them bumps the token revision). */
    private readonly loadHolderLimits: () => Promise<HolderLimits> = async () => NO_HOLDER_LIMITS,
    /** A reload the watcher asked for failed (the database is away): the tokens held are kept, and it is tried again. */
    private readonly onReloadError: (error: unknown) => void = () => undefined,
  ) {}

  async load(): Promise<void> {
    const [records, holderLimits] = await Promise.all([this.store.list(), this.loadHolderLimits()]);
    this.holderLimits = holderLimits;
    const byHash = new Map<string, Principal>();
    for (const record of records) byHash.set(record.secretHash, toPrincipal(record, holderLimits));
    this.byHash = byHash;
    this.unknown.clear();
  }

  /** Synchronous unless a reload is under way, so the common path allocates no promise. */
  authenticate(authorization: string | undefined): Principal | Promise<Principal> {
    if (this.watcher.takeChange() || this.reloadDue()) this.reloading = this.reload();
    if (this.reloading !== null) return this.reloading.then(() => this.resolve(authorization));
    return this.resolve(authorization);
  }

  /**
   * The token a console session stands for, by the hash it was opened with: checked as a bearer
   * token would be (revoked, expired), so a session ends with its token.
   */
  authenticateHash(hash: string): Principal | Promise<Principal> {
    if (this.watcher.takeChange() || this.reloadDue()) this.reloading = this.reload();
    if (this.reloading !== null) return this.reloading.then(() => this.resolveHash(hash));
    return this.resolveHash(hash);
  }

  /** After an in-process change (the admin API), so the next request sees it. */
  invalidate(): Promise<void> {
    this.reloading = this.reload();
    return this.reloading;
  }

  /** Only a failed reload reads the clock here: the common path costs one comparison. */
  private reloadDue(): boolean {
    return this.reloadAgainAt !== Number.POSITIVE_INFINITY && this.now() >= this.reloadAgainAt;
  }

  /**
   * Never rejects: while the database is away, callers are answered from the tokens already held
   * (a revocation made meanwhile cannot be read anyway) rather than refused, and the reload is
   * tried again a second later, so the change that asked for it is not lost.
   */
  private async reload(): Promise<void> {
    this.reloadAgainAt = Number.POSITIVE_INFINITY;
    try {
      await this.load();
    } catch (error) {
      this.reloadAgainAt = this.now() + RELOAD_RETRY_MS;
      this.onReloadError(error);
    } finally {
      this.reloading = null;
    }
  }

  private resolve(authorization: string | undefined): Principal | Promise<Principal> {
    const token = bearerToken(authorization);
    if (token === null) {
      throw new GatewayError('missing_api_key', 'Missing bearer token: send "Authorization: Bearer <token>".');
    }
    if (!looksLikeToken(token, this.prefix)) {
      throw new GatewayError('invalid_api_key', `Malformed API key: a gateway token is "${this.prefix}" followed by ${SECRET_LENGTH} letters and digits.`);
    }
    return this.resolveHash(hashSecret(token));
  }

  private resolveHash(hash: string): Principal | Promise<Principal> {
    const principal = this.byHash.get(hash);
    if (principal === undefined) return this.lookUpMiss(hash);
    if (!digestsEqual(principal.hash, hash)) throw new GatewayError('invalid_api_key', 'Invalid API key.');
    return this.admit(principal);
  }

  /**
   * A token the cache does not know may have been created a moment ago by another process whose
   * change notification has not arrived yet, so it is looked up once before being refused. The
   * look-ups are rate limited and misses remembered for a while, so a flood of made-up tokens
   * cannot turn into a flood of queries.
   */
  private lookUpMiss(hash: string): Promise<Principal> {
    const now = this.now();
    const forgetAt = this.unknown.get(hash);
    if ((forgetAt !== undefined && forgetAt > now) || !this.takeLookupBudget(now)) {
      return Promise.reject(new GatewayError('invalid_api_key', 'Invalid API key.'));
    }
    return this.store.findBySecretHash(hash).then((record) => {
      if (record === null) {
        if (this.unknown.size >= MAX_REMEMBERED_MISSES) this.unknown.clear();
        this.unknown.set(hash, this.now() + MISS_MEMORY_MS);
        throw new GatewayError('invalid_api_key', 'Invalid API key.');
      }
      const principal = toPrincipal(record, this.holderLimits);
      this.byHash.set(record.secretHash, principal);
      return this.admit(principal);
    });
  }

  private takeLookupBudget(now: number): boolean {
    if (now - this.budgetRefilledAt >= 1_000) {
      this.lookupBudget = MISS_LOOKUPS_PER_SECOND;
      this.budgetRefilledAt = now;
    }
    if (this.lookupBudget <= 0) return false;
    this.lookupBudget--;
    return true;
  }

  private admit(principal: Principal): Principal {
    if (principal.revokedAt !== null) throw new GatewayError('revoked_api_key', 'This API key has been revoked.');
    if (principal.expiresAt !== null && principal.expiresAt <= this.now()) {
      throw new GatewayError('expired_api_key', 'This API key has expired.');
    }
    return principal;
  }
}

const MISS_LOOKUPS_PER_SECOND = 50;
const MISS_MEMORY_MS = 10_000;
const MAX_REMEMBERED_MISSES = 10_000;

function bearerToken(authorization: string | undefined): string | null {
  const value = authorization?.trim() ?? '';
  if (value === '') return null;
  const space = value.indexOf(' ');
  if (space !== -1 && value.slice(0, space).toLowerCase() === 'bearer') {
    const token = value.slice(space + 1).trim();
    return token === '' ? null : token;
  }
  // Another scheme or a bare value: reported as malformed rather than missing.
  return value;
}

function toPrincipal(record: TokenRecord, holderLimits: HolderLimits): Principal {
  return {
    tokenId: record.id,
    team: record.team,
    project: record.project,
    scopes: new Set(record.scopes as Scope[]),
    models: record.models === null ? null : new Set(record.models),
    expiresAt: record.expiresAt,
    revokedAt: record.revokedAt,
    hash: record.secretHash,
    holders: holdersOf(record, holderLimits),
  };
}
