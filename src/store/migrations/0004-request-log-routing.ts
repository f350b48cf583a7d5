import type { Kysely } from 'kysely';

/**
 * What routing decided for each request: where its session id came from, what became of its
 * binding (`new`, `kept`, `moved`, `overflow`), and every attempt (credential, outcome, upstream
 * status, milliseconds) as JSON, so a failover can be read from the row alone.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('request_logs').addColumn('session_source', 'varchar(32)').execute();
  await db.schema.alterTable('request_logs').addColumn('affinity', 'varchar(16)').execute();
  await db.schema.alterTable('request_logs').addColumn('attempts', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('request_logs').dropColumn('attempts').execute();
  await db.schema.alterTable('request_logs').dropColumn('affinity').execute();
  await db.schema.alterTable('request_logs').dropColumn('session_source').execute();
}
