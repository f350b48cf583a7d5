import { performance } from 'node:perf_hooks';
import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import type { DatabaseSchema } from './database-schema.js';
import { MIGRATIONS } from './migrations/index.js';

type DialectName = 'sqlite' | 'postgres';

/** What the migration runner tells as it goes, for the gateway's log and the command line. */
export type MigrationEvent =
  | { kind: 'started'; name: string; position: number; count: number }
  | { kind: 'finished'; name: string; position: number; count: number; durationMs: number }
  /** Once per run, also when nothing was pending: `latest` is the schema's migration now. */
  | { kind: 'done'; applied: readonly string[]; durationMs: number; latest: string | null };

export interface AppliedMigration {
  name: string;
  /** When it ran, as the migrations table records it (ISO 8601). */
  appliedAt: string;
  /** The release that ran it; null when no record says (it ran before releases were recorded). */
  release: string | null;
}

export interface MigrationStatus {
  /** This release's migrations that the database has, in order. */
  applied: AppliedMigration[];
  /** This release's migrations that the database lacks: `serve` or `migrate` applies them. */
  pending: string[];
  /** Migrations the database has and this release does not know: a newer release wrote them. */
  unknown: AppliedMigration[];
  /** The release that wrote the unknown migrations (the last one's record), when known. */
  writtenBy: string | null;
}

export interface MigrateOptions {
  /** The release that runs the migrations, recorded beside each one it applies. */
  release?: string;
  onEvent?: (event: MigrationEvent) => void;
  /** How the refusal names the database (its URL without password). */
  databaseName: string;
}

/**
 * The database holds migrations this release does not know: a newer release migrated it. Running
 * on it could misread or damage rows that release wrote, so nothing starts.
 */
export class NewerSchemaError extends Error {
  constructor(
    readonly databaseName: string,
    readonly release: string | null,
    readonly writtenBy: string | null,
    readonly unknown: readonly string[],
  ) {
    const writer = writtenBy === null ? 'a newer release' : `switchyard ${writtenBy}, a newer release`;
    const self = release === null ? 'this one' : `this one (${release})`;
    super(
      `the database ${databaseName} was written by ${writer} than ${self}: it has migrations this release does not know: ${unknown.join(', ')}. ` +
        `Start ${writtenBy === null ? 'that release' : `switchyard ${writtenBy}`} again, or roll back: stop every gateway, restore the backup you took before the upgrade, ` +
        `then start this release (docs/operations.md, "Upgrade and roll back")`,
    );
    this.name = 'NewerSchemaError';
  }
}

const MIGRATION_TABLE = 'kysely_migration';
const HISTORY_TABLE = 'switchyard_schema_history';

/** This release's migration names, in the order they run. */
export function knownMigrations(): string[] {
  return Object.keys(MIGRATIONS).sort();
}

/** What the database has applied, what this release would apply, and what it does not know; changes nothing. */
export async function readMigrationStatus(db: Kysely<DatabaseSchema>, dialect: DialectName): Promise<MigrationStatus> {
  const schema = await currentSchema(db, dialect);
  const tables = await existingTables(db, dialect, schema);
  const executed = tables.has(MIGRATION_TABLE) ? await executedMigrations(db, schema) : [];
  const releases = tables.has(HISTORY_TABLE) ? await recordedReleases(db, schema) : new Map<string, { release: string; appliedAt: number }>();
  const known = new Set(knownMigrations());
  const described = executed.map(({ name, timestamp }) => ({ name, appliedAt: timestamp, release: releases.get(name)?.release ?? null }));
  const unknown = described.filter(({ name }) => !known.has(name));
  const done = new Set(executed.map(({ name }) => name));
  // The release that ran the newest of the unknown migrations is the one that left the schema as it is.
  const newest = unknown
    .map(({ name }) => releases.get(name))
    .filter((record) => record !== undefined)
    .sort((left, right) => right.appliedAt - left.appliedAt)[0];
  return {
    applied: described.filter(({ name }) => known.has(name)),
    pending: knownMigrations().filter((name) => !done.has(name)),
    unknown,
    writtenBy: newest?.release ?? null,
  };
}

/**
 * Applies this release's pending migrations, telling each as it runs, and records which release
 * applied them. Refuses, before changing anything, a database that has migrations this release
 * does not know.
 */
export async function migrateSchema(db: Kysely<DatabaseSchema>, dialect: DialectName, options: MigrateOptions): Promise<void> {
  const status = await readMigrationStatus(db, dialect);
  if (status.unknown.length > 0) {
    throw new NewerSchemaError(
      options.databaseName,
      options.release ?? null,
      status.writtenBy,
      status.unknown.map(({ name }) => name),
    );
  }
  const onEvent = options.onEvent ?? (() => undefined);
  const started = performance.now();
  // Kysely decides whether its migration tables exist by looking at every schema it can see: with
  // another schema of the same database holding them (another gateway, a parallel test run), it
  // skips creating its own and then fails to lock them ("kysely_migration_lock does not exist").
  // Naming the schema in effect keeps it to that one.
  const migrationTableSchema = await currentSchema(db, dialect);
  const migrator = new Migrator({ db, provider: told(status.pending, onEvent), ...(migrationTableSchema === undefined ? {} : { migrationTableSchema }) });
  const { error, results = [] } = await migrator.migrateToLatest();
  if (error !== undefined) {
    const failed = results.find((result) => result.status === 'Error');
    const name = failed === undefined ? '' : ` ${failed.migrationName}`;
    throw new Error(`database migration${name} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  const applied = results.filter((result) => result.status === 'Success').map((result) => result.migrationName);
  if (applied.length > 0 && options.release !== undefined) {
    const appliedAt = Date.now();
    await db
      .insertInto(HISTORY_TABLE)
      .values(applied.map((migration) => ({ migration, release: options.release as string, applied_at: appliedAt })))
      .onConflict((conflict) => conflict.column('migration').doNothing())
      .execute();
  }
  onEvent({ kind: 'done', applied, durationMs: performance.now() - started, latest: knownMigrations().at(-1) ?? null });
}

/** The migrations, each telling when it starts and how long it took. */
function told(pending: readonly string[], onEvent: (event: MigrationEvent) => void): MigrationProvider {
  const count = pending.length;
  const timed = (name: string, migration: Migration): Migration => ({
    ...migration,
    up: async (db) => {
      const position = pending.indexOf(name) + 1;
      onEvent({ kind: 'started', name, position, count });
      const started = performance.now();
      await migration.up(db);
      onEvent({ kind: 'finished', name, position, count, durationMs: performance.now() - started });
    },
  });
  return { getMigrations: async () => Object.fromEntries(Object.entries(MIGRATIONS).map(([name, migration]) => [name, timed(name, migration)])) };
}

async function currentSchema(db: Kysely<DatabaseSchema>, dialect: DialectName): Promise<string | undefined> {
  if (dialect !== 'postgres') return undefined;
  return (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema;
}

async function existingTables(db: Kysely<DatabaseSchema>, dialect: DialectName, schema: string | undefined): Promise<Set<string>> {
  const names = [MIGRATION_TABLE, HISTORY_TABLE];
  const query =
    dialect === 'sqlite'
      ? sql<{ name: string }>`select name from sqlite_master where type = 'table' and name in (${sql.join(names)})`
      : sql<{
          name: string;
        }>`select table_name as name from information_schema.tables where table_schema = ${schema ?? 'public'} and table_name in (${sql.join(names)})`;
  return new Set((await query.execute(db)).rows.map((row) => row.name));
}

async function executedMigrations(db: Kysely<DatabaseSchema>, schema: string | undefined): Promise<Array<{ name: string; timestamp: string }>> {
  const table = schema === undefined ? sql.table(MIGRATION_TABLE) : sql.table(`${schema}.${MIGRATION_TABLE}`);
  const rows = (await sql<{ name: string; timestamp: string }>`select name, timestamp from ${table}`.execute(db)).rows;
  return rows.sort((left, right) => left.name.localeCompare(right.name));
}

async function recordedReleases(db: Kysely<DatabaseSchema>, schema: string | undefined): Promise<Map<string, { release: string; appliedAt: number }>> {
  const table = schema === undefined ? sql.table(HISTORY_TABLE) : sql.table(`${schema}.${HISTORY_TABLE}`);
  const rows = (await sql<{ migration: string; release: string; applied_at: number | string }>`select migration, release, applied_at from ${table}`.execute(db))
    .rows;
  return new Map(rows.map((row) => [row.migration, { release: row.release, appliedAt: Number(row.applied_at) }]));
}
