import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, sql } from 'kysely';
import type pg from 'pg';
import type { DatabaseSchema } from './database-schema.js';
import { migrationProvider } from './migrations/index.js';
import { SQLITE_LOCK_WAIT_MS, WriteTransactionsSqliteDialect } from './sqlite-dialect.js';

export type DialectName = 'sqlite' | 'postgres';

export interface Database {
  readonly db: Kysely<DatabaseSchema>;
  readonly dialect: DialectName;
  /** The raw SQLite handle, for the few synchronous checks that must not wait (token change detection). */
  readonly sqlite: SqliteDatabase.Database | null;
  /** PostgreSQL: the driver and the pool's settings, for a dedicated LISTEN connection. */
  readonly postgres: { driver: typeof pg; config: pg.PoolConfig } | null;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** PostgreSQL only: the schema to use (created if missing). Tests use one schema per run. */
  schema?: string;
  cwd?: string;
  /** SQLite: WAL pages after which a commit also checkpoints (see docs/request-log.md). */
  sqliteCheckpointPages?: number;
}

/**
 * SQLite checkpoints inside the commit that makes the WAL cross this many pages, on the thread
 * that commits: for the gateway, the event loop. Its cost grows with the pages copied: at SQLite's
 * default of 1000 one commit in fifty stalled 5–9 ms (measured, request-log batches of 100 rows);
 * at 300, three in 1,500 went over 3 ms, the worst 3.8 ms, for 0.3 µs more a row.
 */
export const DEFAULT_SQLITE_CHECKPOINT_PAGES = 300;

const INT8_OID = 20;
const NUMERIC_OID = 1700;

/** `sqlite:PATH`, `sqlite::memory:`, or `postgres://…`. Migrations run before this returns. */
export async function openDatabase(url: string, options: OpenDatabaseOptions = {}): Promise<Database> {
  const database = url.startsWith('sqlite:') ? openSqlite(url.slice('sqlite:'.length), options) : await openPostgres(url, options.schema);
  await migrate(database);
  return database;
}

function openSqlite(path: string, { cwd = process.cwd(), sqliteCheckpointPages = DEFAULT_SQLITE_CHECKPOINT_PAGES }: OpenDatabaseOptions): Database {
  const inMemory = path === ':memory:' || path === '';
  const file = inMemory ? ':memory:' : resolve(cwd, path);
  if (!inMemory) mkdirSync(dirname(file), { recursive: true });
  const sqlite = new SqliteDatabase(file);
  // WAL lets the CLI write while the server reads. Another process's lock is never waited for on
  // this thread (better-sqlite3 is synchronous: the wait would be the event loop's): a locked
  // statement fails at once and the dialect retries it after a timer (sqlite-dialect.ts), the
  // request log's batch at the queue's next flush.
  // Only the switch to WAL, before anything is served, may wait (two processes creating the file).
  sqlite.pragma(`busy_timeout = ${SQLITE_LOCK_WAIT_MS}`);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('busy_timeout = 0');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma(`wal_autocheckpoint = ${Math.trunc(sqliteCheckpointPages)}`);
  const db = new Kysely<DatabaseSchema>({ dialect: new WriteTransactionsSqliteDialect({ database: sqlite }) });
  return { db, dialect: 'sqlite', sqlite, postgres: null, close: () => db.destroy() };
}

async function openPostgres(connectionString: string, schema: string | undefined): Promise<Database> {
  // Loaded only for PostgreSQL: a SQLite install does not pay its memory (measured ~15 MB RSS).
  const { default: pg } = await import('pg');
  const types = {
    getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
      oid === INT8_OID || oid === NUMERIC_OID ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
  };
  const poolConfig: pg.PoolConfig = { connectionString, max: 10, types };
  if (schema !== undefined) {
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`invalid PostgreSQL schema name "${schema}"`);
    const setup = new pg.Client({ connectionString });
    await setup.connect();
    try {
      await setup.query(`create schema if not exists ${schema}`);
    } finally {
      await setup.end();
    }
    poolConfig.options = `-c search_path=${schema}`;
  }
  const pool = new pg.Pool(poolConfig);
  const db = new Kysely<DatabaseSchema>({ dialect: new PostgresDialect({ pool }) });
  return { db, dialect: 'postgres', sqlite: null, postgres: { driver: pg, config: poolConfig }, close: () => db.destroy() };
}

async function migrate({ db, dialect }: Database): Promise<void> {
  // Kysely decides whether its migration tables exist by looking at every schema it can see: with
  // another schema of the same database holding them (another gateway, a parallel test run), it
  // skips creating its own and then fails to lock them ("kysely_migration_lock does not exist").
  // Naming the schema in effect keeps it to that one.
  const migrationTableSchema = dialect === 'postgres' ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema : undefined;
  const migrator = new Migrator({ db, provider: migrationProvider, ...(migrationTableSchema === undefined ? {} : { migrationTableSchema }) });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) {
    const failed = results?.find((result) => result.status === 'Error');
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}
