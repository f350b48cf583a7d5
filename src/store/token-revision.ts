import { sql, type Kysely } from 'kysely';
import type { DatabaseSchema } from './database-schema.js';
import type { DialectName } from './open-database.js';

/** The channel PostgreSQL notifies on every token change, so every replica's cache reloads. */
export const TOKEN_CHANGE_CHANNEL = 'switchyard_tokens';

/**
 * Marks, inside the writing transaction, that what the token cache holds has changed: a token,
 * or a team or project whose limits the cache carries with it. Every process watches this one
 * revision (SQLite) or channel (PostgreSQL), so a change to any of them reloads every cache.
 */
export async function bumpTokenRevision(transaction: Kysely<DatabaseSchema>, dialect: DialectName): Promise<void> {
  await transaction.updateTable('revisions').set({ value: sql`value + 1` }).where('name', '=', 'tokens').execute();
  // Delivered at commit, so listeners never reload before the change is visible.
  if (dialect === 'postgres') await sql`select pg_notify(${TOKEN_CHANGE_CHANNEL}, '')`.execute(transaction);
}
