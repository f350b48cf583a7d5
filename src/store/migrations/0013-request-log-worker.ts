import type { Kysely } from 'kysely';

/**
 * Which worker of `serve --workers` served the request (docs/workers.md); null for a gateway that
 * runs as one process, and for rows older than the column.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('request_logs').addColumn('worker', 'integer').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('request_logs').dropColumn('worker').execute();
}
