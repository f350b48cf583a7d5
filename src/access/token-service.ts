import { randomBytes } from 'node:crypto';
import type { TokenRecord, TokenStore } from '../store/index.js';
import { DEFAULT_SCOPES, isScope, SCOPES, type Scope } from './scopes.js';
import { displayPrefix, generateSecret, hashSecret } from './token-secret.js';

export interface CreateTokenInput {
  team: string;
  project?: string | null;
  name?: string | null;
  scopes?: readonly string[];
  models?: readonly string[] | null;
  /** Lifetime in milliseconds from now; null or absent: never expires. */
  expiresInMs?: number | null;
}

export interface CreatedToken {
  /** The only time the secret exists outside the caller's hands. */
  secret: string;
  record: TokenRecord;
}

export class TokenInputError extends Error {}

/** Creates, lists and revokes tokens. Used by the CLI and, later, the console's admin API. */
export class TokenService {
  constructor(
    private readonly store: TokenStore,
    private readonly prefix: string,
    private readonly now: () => number = Date.now,
    /** Called after every change, so this process's token cache sees it on the next request. */
    private readonly onChange: () => Promise<void> = async () => undefined,
  ) {}

  async create(input: CreateTokenInput): Promise<CreatedToken> {
    const team = input.team.trim();
    if (team === '') throw new TokenInputError('team must not be empty');
    const scopes = normaliseScopes(input.scopes);
    const models = input.models === undefined || input.models === null ? null : [...new Set(input.models.map((model) => model.trim()).filter(Boolean))];
    if (models !== null && models.length === 0) throw new TokenInputError('models must name at least one model when given');
    if (input.expiresInMs !== undefined && input.expiresInMs !== null && !(input.expiresInMs > 0)) {
      throw new TokenInputError('expiry must be in the future');
    }
    const secret = generateSecret(this.prefix);
    const createdAt = this.now();
    const record: TokenRecord = {
      id: `tok_${randomBytes(9).toString('base64url')}`,
      name: input.name?.trim() || null,
      team,
      project: input.project?.trim() || null,
      secretHash: hashSecret(secret),
      displayPrefix: displayPrefix(secret, this.prefix),
      scopes,
      models,
      createdAt,
      expiresAt: input.expiresInMs === undefined || input.expiresInMs === null ? null : createdAt + input.expiresInMs,
      revokedAt: null,
      limits: {},
    };
    await this.store.insert(record);
    await this.onChange();
    return { secret, record };
  }

  list(): Promise<TokenRecord[]> {
    return this.store.list();
  }

  async revoke(id: string): Promise<boolean> {
    const found = await this.store.revoke(id, this.now());
    if (found) await this.onChange();
    return found;
  }
}

function normaliseScopes(requested: readonly string[] | undefined): Scope[] {
  if (requested === undefined) return [...DEFAULT_SCOPES];
  const scopes = [...new Set(requested.map((scope) => scope.trim()).filter(Boolean))];
  const unknown = scopes.filter((scope) => !isScope(scope));
  if (unknown.length > 0) throw new TokenInputError(`unknown scope ${unknown.join(', ')} (valid scopes: ${SCOPES.join(', ')})`);
  if (scopes.length === 0) throw new TokenInputError('scopes must name at least one scope when given');
  return scopes as Scope[];
}
