import type { Kysely } from 'kysely';

/**
 * The model's name at the upstream (an Azure deployment, a vendor's path) beside `model`, the
 * public id callers asked for and are answered with: the log tells which upstream name served.
 * `text`, since the config does not bound an upstream's model name (a longer one must not fail the batch).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('request_logs').addColumn('upstream_model', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('request_logs').dropColumn('upstream_model').execute();
}
