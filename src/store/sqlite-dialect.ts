import { CompiledQuery, SqliteDialect, SqliteDriver, type DatabaseConnection, type Driver, type SqliteDialectConfig } from 'kysely';

/**
 * Kysely's SQLite dialect, whose transactions begin IMMEDIATE: they take the write lock at once,
 * waiting for it up to `busy_timeout`. A deferred transaction (Kysely's `begin`) reads first on a
 * snapshot, and when another process (a gateway writing its request log) commits before it writes,
 * its first write fails at once with "database is locked": SQLite cannot wait there. Every
 * transaction here writes, so none is worse off for holding the lock from its start.
 */
export class WriteTransactionsSqliteDialect extends SqliteDialect {
  constructor(private readonly settings: SqliteDialectConfig) {
    super(settings);
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.settings);
  }
}

class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}
