import { CompiledQuery, SqliteDialect, SqliteDriver, type DatabaseConnection, type Driver, type QueryResult, type SqliteDialectConfig } from 'kysely';

/**
 * How long a statement or a transaction's start keeps retrying while another connection holds
 * SQLite's write lock (the CLI, another gateway's batch, a backup or `VACUUM`), before it fails
 * with `SQLITE_BUSY`. What `busy_timeout` waited before; the wait is now timers, not the thread.
 */
export const SQLITE_LOCK_WAIT_MS = 5_000;
const FIRST_RETRY_MS = 2;
const LONGEST_RETRY_MS = 100;

/**
 * Kysely's SQLite dialect, for a connection opened with `busy_timeout = 0`: better-sqlite3 is
 * synchronous, so a busy timeout would wait for another process's lock on the event loop, stalling
 * every request in flight (a 20 s `BEGIN EXCLUSIVE` elsewhere froze the gateway). Here a statement
 * outside a transaction, or a transaction's `begin`, that finds the database locked fails at once
 * and is tried again after a timer, with backoff, for up to `SQLITE_LOCK_WAIT_MS`.
 *
 * Its transactions begin IMMEDIATE: they take the write lock at once. A deferred transaction
 * (Kysely's `begin`) reads first on a snapshot, and when another process (a gateway writing its
 * request log) commits before it writes, its first write fails with "database is locked", which no
 * retry of that statement can cure. Every transaction here writes, so none is worse off for holding
 * the lock from its start.
 */
export class WriteTransactionsSqliteDialect extends SqliteDialect {
  constructor(private readonly settings: SqliteDialectConfig) {
    super(settings);
  }

  override createDriver(): Driver {
    return new LockRetryingSqliteDriver(this.settings);
  }
}

class LockRetryingSqliteDriver extends SqliteDriver {
  private wrapped: RetryingConnection | null = null;

  override async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await super.acquireConnection();
    // SQLite has one connection: wrap it once.
    if (this.wrapped === null) this.wrapped = new RetryingConnection(connection);
    return this.wrapped;
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
    if (connection instanceof RetryingConnection) connection.inTransaction = true;
  }

  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await super.commitTransaction(connection);
    if (connection instanceof RetryingConnection) connection.inTransaction = false;
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (connection instanceof RetryingConnection) connection.inTransaction = false;
    await super.rollbackTransaction(connection);
  }
}

class RetryingConnection implements DatabaseConnection {
  /** Inside a transaction a locked statement is not retried: SQLite wants the transaction rolled back. */
  inTransaction = false;

  constructor(private readonly connection: DatabaseConnection) {}

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    if (this.inTransaction) return this.connection.executeQuery<R>(compiledQuery);
    return whenUnlocked(() => this.connection.executeQuery<R>(compiledQuery));
  }

  streamQuery<R>(compiledQuery: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.connection.streamQuery<R>(compiledQuery, chunkSize);
  }
}

/** `SQLITE_BUSY` (another connection holds the lock) and its extended codes, and `SQLITE_LOCKED`. */
export function isSqliteLocked(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/**
 * Runs `write` (a statement, a transaction, synchronous or not) again after a timer, with backoff,
 * while another connection holds the lock (busy_timeout is 0: a wait would be the event loop's),
 * for up to `SQLITE_LOCK_WAIT_MS`. The clock is read only once it has found the database locked.
 */
export async function whenUnlocked<T>(write: () => T | Promise<T>): Promise<T> {
  let deadline = Number.NaN;
  for (let delay = FIRST_RETRY_MS; ; delay = Math.min(delay * 2, LONGEST_RETRY_MS)) {
    try {
      return await write();
    } catch (error) {
      if (!isSqliteLocked(error)) throw error;
      if (Number.isNaN(deadline)) deadline = performance.now() + SQLITE_LOCK_WAIT_MS;
      if (performance.now() + delay > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
