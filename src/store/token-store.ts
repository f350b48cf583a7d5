import { sql, type Kysely, type Selectable } from 'kysely';
import type { DatabaseSchema, TokensTable } from './database-schema.js';
import type { Limits } from './team-store.js';

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

export interface TokenStore {
  insert(record: TokenRecord): Promise<void>;
  list(): Promise<TokenRecord[]>;
  findById(id: string): Promise<TokenRecord | null>;
  findBySecretHash(secretHash: string): Promise<TokenRecord | null>;
  /** Returns false when no such token exists; revoking twice keeps the first time. */
  revoke(id: string, at: number): Promise<boolean>;
  /** A number that grows with every change to the tokens table, from any process. */
  readRevision(): Promise<number>;
}

/** The channel PostgreSQL notifies on every token change, so every replica's cache reloads. */
export const TOKEN_CHANGE_CHANNEL = 'switchyard_tokens';

export class KyselyTokenStore implements TokenStore {
  constructor(
    private readonly db: Kysely<DatabaseSchema>,
    private readonly notifies: boolean,
  ) {}

  /** The token, and its team and project as records when they are new (a token names them freely). */
  async insert(record: TokenRecord): Promise<void> {
    await this.db.transaction().execute(async (transaction) => {
      const at = record.createdAt;
      await transaction.insertInto('teams').values({ id: record.team, name: record.team, limits: null, created_at: at, updated_at: at }).onConflict((conflict) => conflict.doNothing()).execute();
      if (record.project !== null) {
        await transaction.insertInto('projects').values({ team: record.team, id: record.project, name: record.project, limits: null, created_at: at, updated_at: at }).onConflict((conflict) => conflict.doNothing()).execute();
      }
      await transaction.insertInto('tokens').values(toRow(record)).execute();
      await this.bumpRevision(transaction);
    });
  }

  async list(): Promise<TokenRecord[]> {
    const rows = await this.db.selectFrom('tokens').selectAll().orderBy('created_at').orderBy('id').execute();
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
      const existing = await transaction.selectFrom('tokens').select('revoked_at').where('id', '=', id).executeTakeFirst();
      if (existing === undefined) return false;
      if (existing.revoked_at === null) {
        await transaction.updateTable('tokens').set({ revoked_at: at }).where('id', '=', id).execute();
        await this.bumpRevision(transaction);
      }
      return true;
    });
  }

  async readRevision(): Promise<number> {
    const row = await this.db.selectFrom('revisions').select('value').where('name', '=', 'tokens').executeTakeFirst();
    return Number(row?.value ?? 0);
  }

  private async bumpRevision(transaction: Kysely<DatabaseSchema>): Promise<void> {
    await transaction
      .updateTable('revisions')
      .set({ value: sql`value + 1` })
      .where('name', '=', 'tokens')
      .execute();
    // Delivered at commit, so listeners never reload before the change is visible.
    if (this.notifies) await sql`select pg_notify(${TOKEN_CHANGE_CHANNEL}, '')`.execute(transaction);
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
    limits: Object.keys(record.limits).length === 0 ? null : JSON.stringify(record.limits),
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
    limits: row.limits === null ? {} : (JSON.parse(row.limits) as Limits),
  };
}
