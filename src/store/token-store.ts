import type { Kysely, Selectable } from 'kysely';
import type { DatabaseSchema, TokensTable } from './database-schema.js';
import type { DialectName } from './open-database.js';
import { limitsFromJson, limitsJson, mergeLimits, type LimitChanges, type Limits } from './team-store.js';
import { bumpTokenRevision } from './token-revision.js';

export { TOKEN_CHANGE_CHANNEL } from './token-revision.js';

export interface TokenRecord {
  id: string;
  name: string | null;
  team: string;
  project: string | null;
  secretHash: string;
  displayPrefix: string;
  scopes: string[];
  /** null: every model the gateway serves. */
  models: string[] | null;
  createdAt: number;
  expiresAt: number | null;
  revokedAt: number | null;
  /** The token's own rate limits and quotas; `{}` for none. */
  limits: Limits;
}

/** What `update` may change of a token; absent fields are kept. */
export interface TokenChanges {
  name?: string | null;
  scopes?: string[];
  models?: string[] | null;
  expiresAt?: number | null;
  limits?: LimitChanges;
}

/** One page of tokens in creation order: after the token `after` names, at most `limit`, optionally of one team (and project). */
export interface TokenPage {
  limit: number;
  after?: { createdAt: number; id: string };
  team?: string;
  project?: string;
}

export interface TokenStore {
  /**
   * The token, and its team's record when the team is new (a token names its team into being).
   * Its project must exist in that team already: false when it does not, and nothing is written.
   */
  insert(record: TokenRecord): Promise<boolean>;
  /**
   * The token only when there is no token at all (the bootstrap admin token of a first start):
   * false, and nothing written, when one exists. Processes starting at once on an empty database
   * make one between them.
   */
  insertFirst(record: TokenRecord): Promise<boolean>;
  /** Every token, in creation order (the token cache loads them all). */
  list(): Promise<TokenRecord[]>;
  listPage(page: TokenPage): Promise<TokenRecord[]>;
  findById(id: string): Promise<TokenRecord | null>;
  findBySecretHash(secretHash: string): Promise<TokenRecord | null>;
  /** Returns false when no such token exists; revoking twice keeps the first time. */
  revoke(id: string, at: number): Promise<boolean>;
  /** The token as changed; `revoked` (nothing written) for a revoked token, null when there is none. */
  update(id: string, changes: TokenChanges): Promise<TokenRecord | 'revoked' | null>;
  /** A number that grows with every change to the tokens table, from any process. */
  readRevision(): Promise<number>;
}

export class KyselyTokenStore implements TokenStore {
  constructor(
    private readonly db: Kysely<DatabaseSchema>,
    private readonly dialect: DialectName,
  ) {}

  insert(record: TokenRecord): Promise<boolean> {
    return this.db.transaction().execute((transaction) => this.insertWithin(transaction, record));
  }

  insertFirst(record: TokenRecord): Promise<boolean> {
    return this.db.transaction().execute(async (transaction) => {
      // Every token written bumps this row: locked here, one process at a time asks "none yet?".
      // (A SQLite transaction holds the write lock from its start: begin immediate.)
      if (this.dialect === 'postgres') await transaction.selectFrom('revisions').select('value').where('name', '=', 'tokens').forUpdate().execute();
      if ((await transaction.selectFrom('tokens').select('id').limit(1).executeTakeFirst()) !== undefined) return false;
      return this.insertWithin(transaction, record);
    });
  }

  private async insertWithin(transaction: Kysely<DatabaseSchema>, record: TokenRecord): Promise<boolean> {
    const teamExists = await this.lockTeam(transaction, record.team);
    if (record.project !== null) {
      if (!teamExists) return false;
      let project = transaction.selectFrom('projects').select('id').where('team', '=', record.team).where('id', '=', record.project);
      if (this.dialect === 'postgres') project = project.forShare();
      if ((await project.executeTakeFirst()) === undefined) return false;
    } else if (!teamExists) {
      await this.insertTeam(transaction, record);
      // A team made by a concurrent token and deleted since must be made again, or this token would have none.
      if (this.dialect === 'postgres' && !(await this.lockTeam(transaction, record.team))) await this.insertTeam(transaction, record);
    }
    await transaction.insertInto('tokens').values(toRow(record)).execute();
    await bumpTokenRevision(transaction, this.dialect);
    return true;
  }

  /**
   * Whether the team exists; on PostgreSQL its row is then locked FOR SHARE until commit, so that
   * a team deletion (which locks it FOR UPDATE, then looks for live tokens) waits for this token.
   */
  private async lockTeam(transaction: Kysely<DatabaseSchema>, team: string): Promise<boolean> {
    let query = transaction.selectFrom('teams').select('id').where('id', '=', team);
    if (this.dialect === 'postgres') query = query.forShare();
    return (await query.executeTakeFirst()) !== undefined;
  }

  private async insertTeam(transaction: Kysely<DatabaseSchema>, record: TokenRecord): Promise<void> {
    const at = record.createdAt;
    await transaction
      .insertInto('teams')
      .values({ id: record.team, name: record.team, limits: null, created_at: at, updated_at: at })
      .onConflict((conflict) => conflict.doNothing())
      .execute();
  }

  async list(): Promise<TokenRecord[]> {
    const rows = await this.db.selectFrom('tokens').selectAll().orderBy('created_at').orderBy('id').execute();
    return rows.map(fromRow);
  }

  async listPage(page: TokenPage): Promise<TokenRecord[]> {
    let query = this.db.selectFrom('tokens').selectAll();
    if (page.team !== undefined) query = query.where('team', '=', page.team);
    if (page.project !== undefined) query = query.where('project', '=', page.project);
    const { after } = page;
    if (after !== undefined) {
      query = query.where((where) =>
        where.or([where('created_at', '>', after.createdAt), where.and([where('created_at', '=', after.createdAt), where('id', '>', after.id)])]),
      );
    }
    const rows = await query.orderBy('created_at').orderBy('id').limit(page.limit).execute();
    return rows.map(fromRow);
  }

  async findById(id: string): Promise<TokenRecord | null> {
    const row = await this.db.selectFrom('tokens').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? null : fromRow(row);
  }

  async findBySecretHash(secretHash: string): Promise<TokenRecord | null> {
    const row = await this.db.selectFrom('tokens').selectAll().where('secret_hash', '=', secretHash).executeTakeFirst();
    return row === undefined ? null : fromRow(row);
  }

  async revoke(id: string, at: number): Promise<boolean> {
    return this.db.transaction().execute(async (transaction) => {
      // Only a live token is changed, so that of two concurrent revocations the first time stays.
      const result = await transaction.updateTable('tokens').set({ revoked_at: at }).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
      if (Number(result.numUpdatedRows) > 0) {
        await bumpTokenRevision(transaction, this.dialect);
        return true;
      }
      return (await transaction.selectFrom('tokens').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
    });
  }

  async update(id: string, changes: TokenChanges): Promise<TokenRecord | 'revoked' | null> {
    return this.db.transaction().execute(async (transaction) => {
      let query = transaction.selectFrom('tokens').selectAll().where('id', '=', id);
      // Locked, so that limits merged here are not lost to a concurrent change nor written after a revocation.
      if (this.dialect === 'postgres') query = query.forUpdate();
      const row = await query.executeTakeFirst();
      if (row === undefined) return null;
      const current = fromRow(row);
      if (current.revokedAt !== null) return 'revoked';
      const changed: TokenRecord = {
        ...current,
        ...(changes.name === undefined ? {} : { name: changes.name }),
        ...(changes.scopes === undefined ? {} : { scopes: changes.scopes }),
        ...(changes.models === undefined ? {} : { models: changes.models }),
        ...(changes.expiresAt === undefined ? {} : { expiresAt: changes.expiresAt }),
        ...(changes.limits === undefined ? {} : { limits: mergeLimits(current.limits, changes.limits) }),
      };
      const { name, scopes, models, expires_at, limits } = toRow(changed);
      await transaction.updateTable('tokens').set({ name, scopes, models, expires_at, limits }).where('id', '=', id).execute();
      await bumpTokenRevision(transaction, this.dialect);
      return changed;
    });
  }

  async readRevision(): Promise<number> {
    const row = await this.db.selectFrom('revisions').select('value').where('name', '=', 'tokens').executeTakeFirst();
    return Number(row?.value ?? 0);
  }
}

function toRow(record: TokenRecord): TokensTable {
  return {
    id: record.id,
    name: record.name,
    team: record.team,
    project: record.project,
    secret_hash: record.secretHash,
    display_prefix: record.displayPrefix,
    scopes: JSON.stringify(record.scopes),
    models: record.models === null ? null : JSON.stringify(record.models),
    created_at: record.createdAt,
    expires_at: record.expiresAt,
    revoked_at: record.revokedAt,
    limits: limitsJson(record.limits),
  };
}

function fromRow(row: Selectable<TokensTable>): TokenRecord {
  return {
    id: row.id,
    name: row.name,
    team: row.team,
    project: row.project,
    secretHash: row.secret_hash,
    displayPrefix: row.display_prefix,
    scopes: JSON.parse(row.scopes) as string[],
    models: row.models === null ? null : (JSON.parse(row.models) as string[]),
    createdAt: Number(row.created_at),
    expiresAt: row.expires_at === null ? null : Number(row.expires_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
    limits: limitsFromJson(row.limits),
  };
}
