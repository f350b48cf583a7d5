import { sql, type Kysely, type Selectable } from 'kysely';
import type { DatabaseSchema, UpstreamAccountsTable } from './database-schema.js';

export interface UpstreamAccountRecord {
  id: string;
  provider: string;
  /** The entry's endpoint keys (`base_url`, `token_url`); the rest take their defaults. */
  settings: Record<string, string>;
  /** The account's document (a Codex auth.json), sealed: only the gateway's secret key opens it. */
  sealedDocument: string;
  createdAt: number;
  updatedAt: number;
}

export interface UpstreamAccountStore {
  /** False when an account with this id exists already. */
  insert(record: UpstreamAccountRecord): Promise<boolean>;
  list(): Promise<UpstreamAccountRecord[]>;
  get(id: string): Promise<UpstreamAccountRecord | null>;
  /** A refresh's new tokens; false when the account is gone. */
  updateDocument(id: string, sealedDocument: string, at: number): Promise<boolean>;
  remove(id: string): Promise<boolean>;
  /** Grows with every change, from any process: what a gateway polls to see accounts change. */
  readRevision(): Promise<number>;
}

export class KyselyUpstreamAccountStore implements UpstreamAccountStore {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  async insert(record: UpstreamAccountRecord): Promise<boolean> {
    return this.db.transaction().execute(async (transaction) => {
      const existing = await transaction.selectFrom('upstream_accounts').select('id').where('id', '=', record.id).executeTakeFirst();
      if (existing !== undefined) return false;
      await transaction.insertInto('upstream_accounts').values(toRow(record)).execute();
      await bumpRevision(transaction);
      return true;
    });
  }

  async list(): Promise<UpstreamAccountRecord[]> {
    const rows = await this.db.selectFrom('upstream_accounts').selectAll().orderBy('created_at').orderBy('id').execute();
    return rows.map(fromRow);
  }

  async get(id: string): Promise<UpstreamAccountRecord | null> {
    const row = await this.db.selectFrom('upstream_accounts').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? null : fromRow(row);
  }

  async updateDocument(id: string, sealedDocument: string, at: number): Promise<boolean> {
    return this.db.transaction().execute(async (transaction) => {
      const result = await transaction
        .updateTable('upstream_accounts')
        .set({ sealed_document: sealedDocument, updated_at: at })
        .where('id', '=', id)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return false;
      await bumpRevision(transaction);
      return true;
    });
  }

  async remove(id: string): Promise<boolean> {
    return this.db.transaction().execute(async (transaction) => {
      const result = await transaction.deleteFrom('upstream_accounts').where('id', '=', id).executeTakeFirst();
      if (Number(result.numDeletedRows) === 0) return false;
      await bumpRevision(transaction);
      return true;
    });
  }

  async readRevision(): Promise<number> {
    const row = await this.db.selectFrom('revisions').select('value').where('name', '=', 'upstream_accounts').executeTakeFirst();
    return Number(row?.value ?? 0);
  }
}

async function bumpRevision(transaction: Kysely<DatabaseSchema>): Promise<void> {
  await transaction.updateTable('revisions').set({ value: sql`value + 1` }).where('name', '=', 'upstream_accounts').execute();
}

function toRow(record: UpstreamAccountRecord): UpstreamAccountsTable {
  return {
    id: record.id,
    provider: record.provider,
    settings: JSON.stringify(record.settings),
    sealed_document: record.sealedDocument,
    created_at: record.createdAt,
    updated_at: record.updatedAt,
  };
}

function fromRow(row: Selectable<UpstreamAccountsTable>): UpstreamAccountRecord {
  return {
    id: row.id,
    provider: row.provider,
    settings: JSON.parse(row.settings) as Record<string, string>,
    sealedDocument: row.sealed_document,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}
