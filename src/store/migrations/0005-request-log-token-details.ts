import type { Kysely } from 'kysely';

/** Of a request's tokens, the prompt tokens read from the upstream's cache and the completion tokens spent reasoning, when it reported them. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('request_logs').addColumn('cached_tokens', 'integer').execute();
  await db.schema.alterTable('request_logs').addColumn('reasoning_tokens', 'integer').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('request_logs').dropColumn('reasoning_tokens').execute();
  await db.schema.alterTable('request_logs').dropColumn('cached_tokens').execute();
}
