import { randomBytes } from 'node:crypto';
import { closestNames } from '../core/index.js';
import { echo, GatewayError } from '../errors/index.js';
import type { LimitChanges, Limits, TokenChanges, TokenRecord, TokenStore } from '../store/index.js';
import { checkId, checkLimitChanges, checkLimits, checkName, invalidField } from './input-checks.js';
import { decodeCursor, pageSize, readPage, type Page, type PageRequest } from './list-page.js';
import { DEFAULT_SCOPES, isScope, SCOPES, type Scope } from './scopes.js';
import { displayPrefix, generateSecret, hashSecret } from './token-secret.js';

export interface CreateTokenInput {
  /** Made when missing, as `tokens create --team` always has. */
  team: string;
  /** Must exist in the team already. */
  project?: string | null;
  name?: string | null;
  scopes?: readonly string[];
  models?: readonly string[] | null;
  /** Lifetime in milliseconds from now; null or absent: never expires. */
  expiresInMs?: number | null;
  /** When it expires (ms since the epoch), instead of a lifetime. */
  expiresAt?: number | null;
  limits?: Limits;
}

/** What `update` changes; absent fields are kept. Expiry is `expiresAt` (null: never) or `expiresInMs` from now. */
export interface TokenUpdate {
  name?: string | null;
  scopes?: readonly string[];
  /** null: every model. */
  models?: readonly string[] | null;
  expiresAt?: number | null;
  expiresInMs?: number;
  /** A merge patch: a number sets that limit, null removes it, absent keeps it. */
  limits?: LimitChanges;
}

export interface TokenListRequest extends PageRequest {
  team?: string;
  project?: string;
}

export interface CreatedToken {
  /** The only time the secret exists outside the caller's hands. */
  secret: string;
  record: TokenRecord;
}

const isPosition = (value: unknown): value is [number, string] =>
  Array.isArray(value) && value.length === 2 && Number.isSafeInteger(value[0]) && typeof value[1] === 'string';

/**
 * Creates, lists, changes and revokes tokens: what the CLI and the admin API both call. Bad input
 * is a 422 naming its field (the CLI exits 64 with it), an unknown token a 404.
 */
export class TokenService {
  constructor(
    private readonly store: TokenStore,
    private readonly prefix: string,
    private readonly now: () => number = Date.now,
    /** Called after every change, so this process's token cache sees it on the next request. */
    private readonly onChange: () => Promise<void> = async () => undefined,
    /**
     * The model ids an allow-list may name (the gateway's catalog, published and switched-off
     * models included); null accepts any id, for callers that have no catalog.
     */
    private readonly knownModels: (() => Iterable<string>) | null = null,
  ) {}

  async create(input: CreateTokenInput): Promise<CreatedToken> {
    const { secret, record } = this.newToken(input);
    if (!(await this.store.insert(record))) {
      throw invalidField(
        ['body', 'project'],
        `team ${echo(record.team)} has no project ${echo(record.project ?? '')}; create it first (a token never creates its project)`,
      );
    }
    await this.onChange();
    return { secret, record };
  }

  /** The token only if no token exists at all (the bootstrap admin token); null when one does. */
  async createFirst(input: CreateTokenInput): Promise<CreatedToken | null> {
    const { secret, record } = this.newToken(input);
    if (!(await this.store.insertFirst(record))) return null;
    await this.onChange();
    return { secret, record };
  }

  /** A new token's secret and record, its fields checked. */
  private newToken(input: CreateTokenInput): CreatedToken {
    const team = checkId(typeof input.team === 'string' ? input.team.trim() : input.team, ['body', 'team']);
    const project =
      input.project === undefined || input.project === null || input.project.trim() === '' ? null : checkId(input.project.trim(), ['body', 'project']);
    const scopes = normaliseScopes(input.scopes);
    const models = input.models === undefined || input.models === null ? null : this.checkModels(normaliseModels(input.models));
    const limits = checkLimits(input.limits ?? {}, ['body', 'limits']);
    const createdAt = this.now();
    const expiresAt = this.expiry(input.expiresAt, input.expiresInMs, createdAt) ?? null;
    const secret = generateSecret(this.prefix);
    const record: TokenRecord = {
      id: `tok_${randomBytes(9).toString('base64url')}`,
      name: input.name === undefined || input.name === null || input.name.trim() === '' ? null : checkName(input.name, ['body', 'name']),
      team,
      project,
      secretHash: hashSecret(secret),
      displayPrefix: displayPrefix(secret, this.prefix),
      scopes,
      models,
      createdAt,
      expiresAt,
      revokedAt: null,
      limits,
    };
    return { secret, record };
  }

  /** In creation order; optionally of one team, or one project of it. */
  async list(request: TokenListRequest = {}): Promise<Page<TokenRecord>> {
    const limit = pageSize(request);
    const position = decodeCursor(request.cursor, isPosition);
    const filter = { ...(request.team === undefined ? {} : { team: request.team }), ...(request.project === undefined ? {} : { project: request.project }) };
    return readPage(
      limit,
      (size) => this.store.listPage({ limit: size, ...filter, ...(position === undefined ? {} : { after: { createdAt: position[0], id: position[1] } }) }),
      (last) => [last.createdAt, last.id],
    );
  }

  async get(id: string): Promise<TokenRecord> {
    return (await this.store.findById(id)) ?? tokenNotFound(id);
  }

  /** A revoked token cannot be changed (422); an expired one can, and a new expiry brings it back. */
  async update(id: string, changes: TokenUpdate): Promise<TokenRecord> {
    const checked: TokenChanges = {
      ...(changes.name === undefined ? {} : { name: changes.name === null || changes.name.trim() === '' ? null : checkName(changes.name, ['body', 'name']) }),
      ...(changes.scopes === undefined ? {} : { scopes: normaliseScopes(changes.scopes) }),
      ...(changes.models === undefined ? {} : { models: changes.models === null ? null : this.checkModels(normaliseModels(changes.models)) }),
      ...(changes.limits === undefined ? {} : { limits: checkLimitChanges(changes.limits, ['body', 'limits']) }),
    };
    const expiresAt = this.expiry(changes.expiresAt, changes.expiresInMs, this.now());
    if (expiresAt !== undefined) checked.expiresAt = expiresAt;
    const outcome = await this.store.update(id, checked);
    if (outcome === null) return tokenNotFound(id);
    if (outcome === 'revoked') throw invalidField(['path', 'id'], `token ${echo(id)} is revoked; a revoked token cannot be changed (create a new one)`);
    await this.onChange();
    return outcome;
  }

  /** The token as revoked; revoking twice keeps the first time. */
  async revoke(id: string): Promise<TokenRecord> {
    if (!(await this.store.revoke(id, this.now()))) return tokenNotFound(id);
    await this.onChange();
    return this.get(id);
  }

  /** A typo in an allow-list would make a token that can use nothing: refused, with what was probably meant. */
  private checkModels(models: string[]): string[] {
    if (this.knownModels === null) return models;
    const known = new Set(this.knownModels());
    const unknown = models.find((model) => !known.has(model));
    if (unknown === undefined) return models;
    throw unknownModel(unknown, known);
  }

  /** The expiry asked for: undefined when neither is given, null for never. */
  private expiry(expiresAt: number | null | undefined, expiresInMs: number | null | undefined, now: number): number | null | undefined {
    const lifetime = expiresInMs ?? undefined;
    if (expiresAt !== undefined && lifetime !== undefined) throw invalidField(['body', 'expires_at'], 'give expires_at or expires_in, not both');
    if (lifetime !== undefined) {
      if (!Number.isSafeInteger(lifetime) || lifetime <= 0)
        throw invalidField(['body', 'expires_in'], 'must be a duration in the future, such as 30d, 12h or 90m');
      return now + lifetime;
    }
    if (expiresAt === undefined || expiresAt === null) return expiresAt;
    if (!Number.isSafeInteger(expiresAt) || expiresAt <= now) throw invalidField(['body', 'expires_at'], 'must be in the future');
    return expiresAt;
  }
}

function tokenNotFound(id: string): never {
  throw new GatewayError('token_not_found', `No token has the id ${echo(id)}.`, { param: 'id' });
}

/** How many of the gateway's model ids a refusal lists when none is close to the typo. */
const LISTED_MODELS = 20;

function unknownModel(model: string, known: ReadonlySet<string>): GatewayError {
  const close = closestNames(model, known);
  const sorted = [...known].sort();
  const listed =
    sorted.length === 0
      ? 'this gateway serves no model'
      : `this gateway serves ${sorted.slice(0, LISTED_MODELS).join(', ')}${sorted.length > LISTED_MODELS ? `, and ${sorted.length - LISTED_MODELS} more (GET /v1/models)` : ''}`;
  const hint = close.length === 0 ? listed : `did you mean ${close.map((name) => echo(name)).join(' or ')}?`;
  return new GatewayError('unknown_model', `models: no model has the id ${echo(model)}; ${hint}`, { param: 'models' });
}

function normaliseScopes(requested: readonly string[] | undefined): Scope[] {
  if (requested === undefined) return [...DEFAULT_SCOPES];
  const scopes = [...new Set(requested.map((scope) => scope.trim()).filter(Boolean))];
  const unknown = scopes.filter((scope) => !isScope(scope));
  if (unknown.length > 0)
    throw invalidField(
      ['body', 'scopes'],
      `unknown scope ${unknown.map((scope) => scope.slice(0, 64)).join(', ')} (valid scopes: ${SCOPES.join(', ')})`,
      'enum',
    );
  if (scopes.length === 0) throw invalidField(['body', 'scopes'], 'must name at least one scope when given', 'too_short');
  return scopes as Scope[];
}

function normaliseModels(requested: readonly string[]): string[] {
  const models = [...new Set(requested.map((model) => model.trim()).filter(Boolean))];
  if (models.length === 0) throw invalidField(['body', 'models'], 'must name at least one model when given (null: every model)', 'too_short');
  return models;
}
