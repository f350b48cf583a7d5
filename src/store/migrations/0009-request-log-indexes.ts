import type { Kysely } from 'kysely';

/**
 * The admin API filters the request log by team, newest first: `(team, id)` reads a team's page
 * from its end like `(token_id, id)` does a token's. Model and project filters go without one of
 * their own (measured on 1,000,000 rows in docs/performance-history.md): each index is one B-tree insert
 * more per request (~1 µs a row on SQLite).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('request_logs_team_index').on('request_logs').columns(['team', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('request_logs_team_index').execute();
}
