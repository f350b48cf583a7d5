import type { Kysely } from 'kysely';

/** The client's address: the connection's, or behind a trusted proxy the X-Forwarded-For client's (docs/reverse-proxy.md). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('request_logs').addColumn('client_address', 'varchar(64)').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('request_logs').dropColumn('client_address').execute();
}
