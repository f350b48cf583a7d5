import { sql, type Kysely } from 'kysely';

/**
 * Upstream accounts added at run time (ChatGPT accounts: `switchyard credentials add-codex`, the
 * admin API): the account's document (a Codex auth.json) sealed with the gateway's secret key, and
 * its endpoint settings. Every change bumps the `upstream_accounts` revision, which each gateway
 * process watches to serve a new account, drop a removed one, or take tokens another refreshed.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('upstream_accounts')
    .addColumn('id', 'varchar(128)', (column) => column.primaryKey())
    .addColumn('provider', 'varchar(32)', (column) => column.notNull())
    .addColumn('settings', 'text', (column) => column.notNull())
    .addColumn('sealed_document', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();
  await sql`insert into revisions (name, value) values ('upstream_accounts', 0)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`delete from revisions where name = 'upstream_accounts'`.execute(db);
  await db.schema.dropTable('upstream_accounts').execute();
}
