import { sql, type Kysely } from 'kysely';

/**
 * The request log's key is always the gateway's own request id, which is time-ordered: a
 * caller's `X-Request-Id` (echoed on the response) moves to `client_request_id`, where repeats
 * are allowed; before, a caller that sent the same id twice made every later batch fail on the
 * primary key. Time order now comes from `id` itself, so `created_at` needs no index of its own,
 * and the session index covers only rows that have a session. Each index dropped is one B-tree
 * insert fewer per request (measured on SQLite: ~1 µs of ~4 µs a row).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('request_logs').addColumn('client_request_id', 'varchar(128)').execute();
  await db.schema.dropIndex('request_logs_created_at_index').execute();
  await db.schema.dropIndex('request_logs_session_index').execute();
  await db.schema.dropIndex('request_logs_token_index').execute();
  await db.schema
    .createIndex('request_logs_session_index')
    .on('request_logs')
    .columns(['session_id', 'id'])
    .where(sql.ref('session_id'), 'is not', null)
    .execute();
  await db.schema.createIndex('request_logs_token_index').on('request_logs').columns(['token_id', 'id']).execute();
  await db.schema
    .createIndex('request_logs_client_request_index')
    .on('request_logs')
    .column('client_request_id')
    .where(sql.ref('client_request_id'), 'is not', null)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('request_logs_client_request_index').execute();
  await db.schema.dropIndex('request_logs_token_index').execute();
  await db.schema.dropIndex('request_logs_session_index').execute();
  await db.schema.createIndex('request_logs_created_at_index').on('request_logs').column('created_at').execute();
  await db.schema.createIndex('request_logs_session_index').on('request_logs').columns(['session_id', 'created_at']).execute();
  await db.schema.createIndex('request_logs_token_index').on('request_logs').columns(['token_id', 'created_at']).execute();
  await db.schema.alterTable('request_logs').dropColumn('client_request_id').execute();
}
