import type { Kysely } from 'kysely';

/**
 * Prompt tokens written to the upstream's prompt cache (Anthropic's `cache_creation_input_tokens`,
 * docs/messages-api.md): already counted in `prompt_tokens`, kept apart as `cached_tokens` (reads)
 * are, since they are priced apart. Null when the upstream said nothing of them, and for older rows.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('request_logs').addColumn('cache_write_tokens', 'integer').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('request_logs').dropColumn('cache_write_tokens').execute();
}
