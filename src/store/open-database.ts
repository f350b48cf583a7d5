import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';
import type { DatabaseSchema } from './database-schema.js';
import { knownMigrations, migrateSchema, readMigrationStatus, type MigrateOptions, type MigrationEvent, type MigrationStatus } from './schema-migrations.js';
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
  /** PostgreSQL: the server cancels a statement after this; the client gives up on an answer a second later. */
  statementTimeoutMs?: number;
  /** PostgreSQL: longest to open a connection, or to wait for a free one of the pool's. */
  connectTimeoutMs?: number;
  /**
   * PostgreSQL: an idle pooled connection failed (the server restarted or went away). The pool
   * drops it and opens another for the next query; this is told so the outage can be logged.
   * Without a listener the pool's `error` event would be an uncaught exception.
   */
  onConnectionError?: (error: Error) => void;
  /** The release opening the database (its package version): recorded beside each migration it applies. */
  release?: string;
  /** Told as each pending migration starts and ends, and once when the schema is up to date. */
  onMigration?: (event: MigrationEvent) => void;
}

export const DEFAULT_STATEMENT_TIMEOUT_MS = 10_000;
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
/** The client's own wait past the server's statement timeout: for a server that answers nothing at all. */
const ANSWER_GRACE_MS = 1_000;

/**
 * SQLite checkpoints inside the commit that makes the WAL cross this many pages, on the thread
 * that commits: for the gateway, the event loop. Its cost grows with the pages copied: at SQLite's
 * default of 1000 one commit in fifty stalled 5–9 ms (measured, request-log batches of 100 rows);
 * at 300, three in 1,500 went over 3 ms, the worst 3.8 ms, for 0.3 µs more a row.
 */
export const DEFAULT_SQLITE_CHECKPOINT_PAGES = 300;

const INT8_OID = 20;
const NUMERIC_OID = 1700;

/**
 * `sqlite:PATH`, `sqlite::memory:`, or `postgres://…`. Migrations run before this returns; a
 * database with migrations this release does not know is refused (`NewerSchemaError`).
 */
export async function openDatabase(url: string, options: OpenDatabaseOptions = {}): Promise<Database> {
  const database = await connect(url, options);
  try {
    await migrate(database, {
      databaseName: maskPassword(url),
      ...(options.release === undefined ? {} : { release: options.release }),
      ...(options.onMigration === undefined ? {} : { onEvent: options.onMigration }),
    });
  } catch (error) {
    await database.close();
    throw error;
  }
  return database;
}

/**
 * The migrations the database has, those this release would apply and those it does not know,
 * read without changing anything: a SQLite file that does not exist is not created.
 */
export async function inspectMigrations(url: string, options: OpenDatabaseOptions = {}): Promise<MigrationStatus> {
  const path = url.slice('sqlite:'.length);
  if (url.startsWith('sqlite:') && path !== ':memory:' && path !== '' && !existsSync(resolve(options.cwd ?? process.cwd(), path))) {
    return { applied: [], pending: knownMigrations(), unknown: [], writtenBy: null };
  }
  const database = await connect(url, options);
  try {
    return await readMigrationStatus(database.db, database.dialect);
  } finally {
    await database.close();
  }
}

function connect(url: string, options: OpenDatabaseOptions): Promise<Database> {
  return url.startsWith('sqlite:') ? Promise.resolve(openSqlite(url.slice('sqlite:'.length), options)) : openPostgres(url, options);
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
  // A new database gives the pages retention frees back to the file system step by step
  // (`incremental_vacuum`, store/request-log-retention.ts). It can be set only before the first
  // table; an older database keeps reusing its free pages, and `switchyard requests prune
  // --vacuum` converts it (docs/request-log-retention.md).
  if (isEmpty(sqlite)) sqlite.pragma('auto_vacuum = INCREMENTAL');
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('busy_timeout = 0');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma(`wal_autocheckpoint = ${Math.trunc(sqliteCheckpointPages)}`);
  const db = new Kysely<DatabaseSchema>({ dialect: new WriteTransactionsSqliteDialect({ database: sqlite }) });
  return { db, dialect: 'sqlite', sqlite, postgres: null, close: () => db.destroy() };
}

/** No table yet: a new file, or one that nothing was ever created in. */
function isEmpty(sqlite: SqliteDatabase.Database): boolean {
  return sqlite.prepare("select count(*) from sqlite_master where type = 'table'").pluck().get() === 0;
}

async function openPostgres(connectionString: string, options: OpenDatabaseOptions): Promise<Database> {
  const { schema, statementTimeoutMs = DEFAULT_STATEMENT_TIMEOUT_MS, connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_MS } = options;
  // Loaded only for PostgreSQL: a SQLite install does not pay its memory (measured ~15 MB RSS).
  const { default: pg } = await import('pg');
  const types = {
    getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
      oid === INT8_OID || oid === NUMERIC_OID ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
  };
  // Nothing may hang while PostgreSQL hangs: a statement, an answer, a connection and a wait for
  // one are each bounded, and fail as the outage they are.
  const timeouts = { statement_timeout: statementTimeoutMs, query_timeout: statementTimeoutMs + ANSWER_GRACE_MS, connectionTimeoutMillis: connectTimeoutMs };
  const poolConfig: pg.PoolConfig = { connectionString, max: 10, types, ...timeouts };
  if (schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`invalid PostgreSQL schema name "${schema}"`);
  // The first connection says whether the server can be reached at all, naming it (password masked).
  const setup = new pg.Client({ connectionString, ...timeouts });
  setup.on('error', () => undefined);
  try {
    await setup.connect();
  } catch (error) {
    await setup.end().catch(() => undefined);
    throw new Error(`cannot reach PostgreSQL at ${maskPassword(connectionString)}: ${describeCause(error)}`, { cause: error });
  }
  try {
    if (schema !== undefined) await setup.query(`create schema if not exists ${schema}`);
  } finally {
    await setup.end().catch(() => undefined);
  }
  if (schema !== undefined) poolConfig.options = `-c search_path=${schema}`;
  const pool = new pg.Pool(poolConfig);
  const onConnectionError = options.onConnectionError ?? (() => undefined);
  hearConnectionErrors(pool, onConnectionError);
  const db = new Kysely<DatabaseSchema>({ dialect: new PostgresDialect({ pool }) });
  return { db, dialect: 'postgres', sqlite: null, postgres: { driver: pg, config: poolConfig }, close: () => db.destroy() };
}

/**
 * A connection the server ends emits `error` on its client, also while a query or a transaction
 * holds it, when the pool's own listener (idle clients only) is off it: unheard, that is an
 * uncaught exception. So every client has its own listener from its start, and tells it once;
 * the pool's `error` (the same event, for idle clients) is heard and left at that.
 */
function hearConnectionErrors(pool: pg.Pool, onConnectionError: (error: Error) => void): void {
  pool.on('connect', (client) => client.on('error', onConnectionError));
  pool.on('error', () => undefined);
}

async function migrate(database: Database, options: MigrateOptions): Promise<void> {
  // A migration may rebuild an index over millions of request-log rows: the statement timeout that
  // keeps a hanging server from holding a request is no limit for it, so it runs on a connection
  // of its own without one.
  if (database.postgres === null) return migrateSchema(database.db, database.dialect, options);
  const { driver, config } = database.postgres;
  const pool = new driver.Pool({ ...config, max: 1, statement_timeout: 0, query_timeout: 0 });
  hearConnectionErrors(pool, () => undefined);
  const db = new Kysely<DatabaseSchema>({ dialect: new PostgresDialect({ pool }) });
  try {
    await migrateSchema(db, database.dialect, options);
  } finally {
    await db.destroy();
  }
}

/** `postgres://user:***@host/db`: the URL as an operator wrote it, without its password. */
export function maskPassword(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:@/]*):[^@/]*@/i, '$1:***@');
}

/** A connection failure in words: node's `AggregateError` (every address refused) has an empty message. */
function describeCause(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.message !== '') return error.message;
  const inner = error instanceof AggregateError ? error.errors.find((item): item is Error => item instanceof Error) : undefined;
  return inner?.message ?? (error as { code?: string }).code ?? error.name;
}
