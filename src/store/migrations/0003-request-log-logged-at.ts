import { sql, type Kysely } from 'kysely';

/**
 * `logged_at` is when a row was written, which is the order `switchyard requests tail` follows:
 * ids are ordered by when requests started, so a stream that began before a short request but
 * ended after it would be written after the tail had moved past its id. Rows written before this
 * column existed take the time their request ended.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('request_logs').addColumn('logged_at', 'bigint').execute();
  await sql`update request_logs set logged_at = created_at + cast(latency_ms as bigint)`.execute(db);
  await db.schema.createIndex('request_logs_logged_at_index').on('request_logs').column('logged_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('request_logs_logged_at_index').execute();
  await db.schema.alterTable('request_logs').dropColumn('logged_at').execute();
}
