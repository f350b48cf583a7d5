import { PostgresAdapter, type Kysely } from 'kysely';

/**
 * Which database a migration runs on, for the few whose SQL differs (the request log's partitions
 * exist on PostgreSQL only): told by the dialect's adapter, which Kysely passes along with the
 * connection, transaction or not.
 */
export function migrationDialect(db: Kysely<unknown>): 'sqlite' | 'postgres' {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}
