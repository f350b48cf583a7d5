import type { Kysely } from 'kysely';

/**
 * A token's own rate limits and quotas (JSON, null for none), as teams and projects have theirs;
 * and what each request cost in US dollars by the model's configured price, so that dollar quotas
 * can be rebuilt from the request log after the shared state lost its counters.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tokens').addColumn('limits', 'text').execute();
  await db.schema.alterTable('request_logs').addColumn('cost_usd', 'double precision').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('request_logs').dropColumn('cost_usd').execute();
  await db.schema.alterTable('tokens').dropColumn('limits').execute();
}
