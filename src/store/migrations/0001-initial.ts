import { sql, type Kysely } from 'kysely';

// Migrations take Kysely<unknown>: they must not depend on the current schema types, which move on.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('tokens')
    .addColumn('id', 'varchar(64)', (column) => column.primaryKey())
    .addColumn('name', 'varchar(200)')
    .addColumn('team', 'varchar(200)', (column) => column.notNull())
    .addColumn('project', 'varchar(200)')
    .addColumn('secret_hash', 'varchar(64)', (column) => column.notNull().unique())
    .addColumn('display_prefix', 'varchar(32)', (column) => column.notNull())
    .addColumn('scopes', 'text', (column) => column.notNull())
    .addColumn('models', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('expires_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('tokens_team_index').on('tokens').column('team').execute();

  await db.schema
    .createTable('request_logs')
    .addColumn('id', 'varchar(128)', (column) => column.primaryKey())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('token_id', 'varchar(64)')
    .addColumn('team', 'varchar(200)')
    .addColumn('project', 'varchar(200)')
    .addColumn('endpoint', 'varchar(100)', (column) => column.notNull())
    .addColumn('model', 'varchar(200)')
    .addColumn('upstream', 'varchar(200)')
    .addColumn('session_id', 'varchar(256)')
    .addColumn('status', 'integer', (column) => column.notNull())
    .addColumn('latency_ms', 'double precision', (column) => column.notNull())
    .addColumn('ttfb_ms', 'double precision')
    .addColumn('prompt_tokens', 'integer')
    .addColumn('completion_tokens', 'integer')
    .addColumn('usage_source', 'varchar(16)')
    .addColumn('error_code', 'varchar(64)')
    .execute();
  await db.schema.createIndex('request_logs_created_at_index').on('request_logs').column('created_at').execute();
  await db.schema.createIndex('request_logs_session_index').on('request_logs').columns(['session_id', 'created_at']).execute();
  await db.schema.createIndex('request_logs_token_index').on('request_logs').columns(['token_id', 'created_at']).execute();

  await db.schema
    .createTable('revisions')
    .addColumn('name', 'varchar(64)', (column) => column.primaryKey())
    .addColumn('value', 'bigint', (column) => column.notNull().defaultTo(0))
    .execute();
  await sql`insert into revisions (name, value) values ('tokens', 0)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('revisions').execute();
  await db.schema.dropTable('request_logs').execute();
  await db.schema.dropTable('tokens').execute();
}
