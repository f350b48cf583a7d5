import { releaseVersion } from '../core/index.js';
import { inspectMigrations, NewerSchemaError, type AppliedMigration } from '../store/index.js';
import { redactUrl, type CliIo } from './cli-io.js';
import { commandConfig, databaseOptions, withStores, type ConfigOption } from './cli-stores.js';
import { printTable } from './print-table.js';

interface ListedMigration {
  name: string;
  /** `applied`; `pending`: this release applies it; `unknown`: a newer release applied it. */
  state: 'applied' | 'pending' | 'unknown';
  applied_at: string | null;
  release: string | null;
}

/** `switchyard migrate`: applies the pending migrations, as `serve` does at start, saying each. */
export async function migrateCommand(options: ConfigOption, io: CliIo): Promise<number> {
  await withStores(options, io, async () => undefined, { reportUpToDate: true });
  return 0;
}

/**
 * `switchyard migrate --status`: every migration with its state, changing nothing. Exits as a
 * start would be refused (65) when a newer release's migrations are there.
 */
export async function migrationStatusCommand(options: ConfigOption & { json?: boolean }, io: CliIo): Promise<number> {
  const config = commandConfig(options, io);
  const status = await inspectMigrations(config.database.url, databaseOptions(config)).catch((error: unknown) => {
    throw new Error(`database.url: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  });
  const done =
    (state: 'applied' | 'unknown') =>
    (migration: AppliedMigration): ListedMigration => ({ name: migration.name, state, applied_at: migration.appliedAt, release: migration.release });
  const listed = [
    ...status.applied.map(done('applied')),
    ...status.pending.map((name): ListedMigration => ({ name, state: 'pending', applied_at: null, release: null })),
    ...status.unknown.map(done('unknown')),
  ].sort((left, right) => left.name.localeCompare(right.name));
  if (options.json === true) io.stdout(JSON.stringify(listed, null, 2));
  else
    printTable(
      ['MIGRATION', 'STATE', 'APPLIED', 'RELEASE'],
      listed.map((migration) => [migration.name, migration.state, migration.applied_at ?? '-', migration.release ?? '-']),
      io,
    );
  if (status.unknown.length > 0) {
    throw new NewerSchemaError(
      redactUrl(config.database.url),
      releaseVersion(),
      status.writtenBy,
      status.unknown.map(({ name }) => name),
    );
  }
  const count = status.pending.length;
  io.stderr(
    count === 0
      ? 'nothing pending: the schema is up to date'
      : `${count} pending: \`switchyard serve\` (or \`switchyard migrate\`) applies ${count === 1 ? 'it' : 'them'}`,
  );
  return 0;
}
