import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type MigrationProvider } from 'kysely';
import pg from 'pg';
import { stringify } from 'yaml';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { TokenService } from '../../src/access/index.js';
import { loadConfig } from '../../src/config/index.js';
import { releaseVersion } from '../../src/core/index.js';
import { startGateway } from '../../src/gateway.js';
import { createLogger } from '../../src/observability/logger.js';
import type { DatabaseSchema } from '../../src/store/database-schema.js';
import { openStores, type Database } from '../../src/store/index.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { KyselyTokenStore } from '../../src/store/token-store.js';
import { describeEachBackend } from '../support/database-backends.js';
import { requestLogEntry } from '../support/request-log-entries.js';
import { cli } from '../support/run-cli.js';

/** Runs statements on the database a URL names, outside the gateway's code (as another release would). */
async function execute(url: string, statements: string[]): Promise<Array<Record<string, unknown>>> {
  if (url.startsWith('sqlite:')) {
    const sqlite = new SqliteDatabase(url.slice('sqlite:'.length));
    try {
      let rows: Array<Record<string, unknown>> = [];
      for (const statement of statements) {
        const prepared = sqlite.prepare(statement);
        if (prepared.reader) rows = prepared.all() as Array<Record<string, unknown>>;
        else prepared.run();
      }
      return rows;
    } finally {
      sqlite.close();
    }
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    let rows: Array<Record<string, unknown>> = [];
    for (const statement of statements) rows = (await client.query(statement)).rows as Array<Record<string, unknown>>;
    return rows;
  } finally {
    await client.end();
  }
}

const UNKNOWN = '0099-from-a-newer-release';
/** The migrations this change adds: the release before had every other one. */
const ADDED_BY_THIS_RELEASE = [
  '0010-request-log-client-address',
  '0011-request-log-upstream-model',
  '0012-schema-history',
  '0013-request-log-worker',
  '0014-request-usage-hourly',
  '0015-request-log-partitions',
  '0016-request-usage-summary',
  '0017-request-log-cache-writes',
];
/** The schema this release leaves. */
const LATEST = Object.keys(MIGRATIONS).at(-1) as string;

/** What applying this release's migrations says, in order: a start and an end line each, then the summary. */
function migrationMessages(): unknown[] {
  const count = ADDED_BY_THIS_RELEASE.length;
  return [
    ...ADDED_BY_THIS_RELEASE.flatMap((name, index) => [
      `database migration ${name} (${index + 1} of ${count}) running`,
      expect.stringMatching(new RegExp(`^database migration ${name} \\(${index + 1} of ${count}\\) done in \\d+ ms$`)),
    ]),
    expect.stringMatching(new RegExp(`^database schema migrated: ${count} migrations applied in \\d+ ms, now at ${LATEST}$`)),
  ];
}

/** The database as the release before this one opened it: its migrations, run by kysely's Migrator as it ran them. */
async function openAsReleaseBefore(url: string): Promise<Database> {
  const sqlite = url.startsWith('sqlite:') ? new SqliteDatabase(url.slice('sqlite:'.length)) : null;
  const db = new Kysely<DatabaseSchema>({
    dialect: sqlite === null ? new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 2 }) }) : new SqliteDialect({ database: sqlite }),
  });
  sqlite?.pragma('journal_mode = WAL');
  const migrationTableSchema = sqlite === null ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema : undefined;
  const before: MigrationProvider = {
    getMigrations: async () => Object.fromEntries(Object.entries(MIGRATIONS).filter(([name]) => !ADDED_BY_THIS_RELEASE.includes(name))),
  };
  const { error } = await new Migrator({ db, provider: before, ...(migrationTableSchema === undefined ? {} : { migrationTableSchema }) }).migrateToLatest();
  if (error !== undefined) throw error;
  return { db, dialect: sqlite === null ? 'postgres' : 'sqlite', sqlite, postgres: null, close: () => db.destroy() };
}

/** A logger whose JSON lines are kept, as the gateway writes them to stdout. */
function capturedLogger(): { logger: ReturnType<typeof createLogger>; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger('info', destination), lines };
}

describeEachBackend('upgrades and roll-backs', (backend) => {
  let url: string;
  let dispose: () => Promise<void>;
  let directory: string;
  let configPath: string;

  beforeEach(async () => {
    ({ url, dispose } = await backend.empty());
    directory = mkdtempSync(join(tmpdir(), 'switchyard-upgrade-'));
    configPath = join(directory, 'switchyard.yaml');
    writeFileSync(
      configPath,
      stringify({ server: { host: '127.0.0.1', port: 0 }, database: { url }, logging: { level: 'silent' }, upstreams: [], models: [] }),
    );
  });
  afterEach(async () => {
    await dispose();
    rmSync(directory, { recursive: true, force: true });
  });

  /** This release's schema, then a migration it does not know, as a newer release leaves it. */
  async function writtenByNewerRelease(): Promise<void> {
    const stores = await openStores(url);
    await stores.close();
    await execute(url, [
      'create table newer_release_things (id integer primary key)',
      `insert into kysely_migration (name, timestamp) values ('${UNKNOWN}', '2030-01-01T00:00:00.000Z')`,
    ]);
  }

  it('refuses a schema a newer release wrote, with no record of which: names the migrations and how to roll back, and changes nothing', async () => {
    await writtenByNewerRelease();
    const before = await execute(url, ['select name from kysely_migration order by name']);
    for (const argv of [['serve'], ['tokens', 'list']]) {
      const refused = await cli(...argv, '--config', configPath);
      expect({ argv, code: refused.code }).toEqual({ argv, code: 65 });
      const message = refused.stderr.at(-1) as string;
      expect(message).toContain('written by a newer release');
      expect(message).toContain(`migrations this release does not know: ${UNKNOWN}`);
      expect(message).toMatch(/restore the backup you took before the upgrade.*docs\/operations\.md/);
    }
    expect(await execute(url, ['select name from kysely_migration order by name'])).toEqual(before);
  });

  it('refuses a schema written by release 9.9.9, naming it; migrate --status lists the unknown migration and exits 65 too', async () => {
    await writtenByNewerRelease();
    await execute(url, [`insert into switchyard_schema_history (migration, release, applied_at) values ('${UNKNOWN}', '9.9.9', ${Date.parse('2030-01-01')})`]);
    const refused = await cli('serve', '--config', configPath);
    expect(refused.code).toBe(65);
    expect(refused.stderr).toEqual([
      `switchyard: the database ${url} was written by switchyard 9.9.9, a newer release than this one (${releaseVersion()}): it has migrations this release does not know: ${UNKNOWN}. ` +
        'Start switchyard 9.9.9 again, or roll back: stop every gateway, restore the backup you took before the upgrade, then start this release (docs/operations.md, "Upgrade and roll back")',
    ]);

    const status = await cli('migrate', '--status', '--json', '--config', configPath);
    expect(status.code).toBe(65);
    const listed = JSON.parse(status.stdout.join('\n')) as Array<{ name: string; state: string; release: string | null }>;
    expect(listed.at(-1)).toMatchObject({ name: UNKNOWN, state: 'unknown', release: '9.9.9' });
    expect(listed.filter((migration) => migration.state === 'applied').map((migration) => migration.name)).toEqual(Object.keys(MIGRATIONS));
    expect(status.stderr.at(-1)).toContain('written by switchyard 9.9.9');
  });

  it('from the release before: migrate --status shows what would run and changes nothing; serve migrates, logs each migration, and the rows survive', async () => {
    const old = await openAsReleaseBefore(url);
    const { secret } = await new TokenService(new KyselyTokenStore(old.db, old.dialect), 'svc_').create({ team: 'search', name: 'made-before' });
    const rows = Array.from({ length: 25 }, (_, index) => requestLogEntry(Date.parse('2026-11-01') + index, { tokenId: null }));
    // Written with the columns the release before had: this release's store writes columns it adds.
    await old.db
      .insertInto('request_logs')
      .values(
        rows.map((row) => ({
          id: row.id,
          created_at: row.createdAt,
          token_id: row.tokenId,
          team: row.team,
          project: row.project,
          endpoint: row.endpoint,
          model: row.model,
          upstream: row.upstream,
          session_id: row.sessionId,
          status: row.status,
          latency_ms: row.latencyMs,
          ttfb_ms: row.ttfbMs,
          prompt_tokens: row.promptTokens,
          completion_tokens: row.completionTokens,
          usage_source: row.usageSource,
          error_code: row.errorCode,
          client_request_id: row.clientRequestId,
          logged_at: row.createdAt,
          session_source: row.sessionSource,
          affinity: row.affinity,
          attempts: JSON.stringify(row.attempts),
          cached_tokens: row.cachedTokens,
          reasoning_tokens: row.reasoningTokens,
          cost_usd: row.costUsd,
        })),
      )
      .execute();
    await old.close();

    const status = await cli('migrate', '--status', '--config', configPath);
    expect(status.code).toBe(0);
    expect(status.stdout[0]).toMatch(/^MIGRATION +STATE +APPLIED +RELEASE/);
    expect(status.stdout.find((line) => line.startsWith('0009-request-log-indexes'))).toMatch(/applied/);
    for (const name of ADDED_BY_THIS_RELEASE) expect(status.stdout.find((line) => line.startsWith(name))).toMatch(/pending/);
    expect(status.stderr.at(-1)).toBe(`${ADDED_BY_THIS_RELEASE.length} pending: \`switchyard serve\` (or \`switchyard migrate\`) applies them`);
    expect(await cli('migrate', '--status', '--config', configPath)).toEqual(status);

    const { logger, lines } = capturedLogger();
    const startedAt = Date.now();
    const gateway = await startGateway(loadConfig({ configPath, env: {} }).config, { logger });
    try {
      const migrationLines = lines.filter((line) => String(line['msg']).startsWith('database '));
      expect(migrationLines.map((line) => line['msg'])).toEqual([...migrationMessages()]);
      expect(migrationLines[1]).toMatchObject({ level: 30, migration: ADDED_BY_THIS_RELEASE[0], duration_ms: expect.any(Number) });
      expect(migrationLines.at(-1)).toMatchObject({ applied: ADDED_BY_THIS_RELEASE, schema: LATEST });

      const models = await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${secret}` } });
      expect(models.status).toBe(200);
      // The rows the old release wrote; the row of the request above is written too once the log's
      // flush interval has passed, which a slow machine can reach before this query.
      const kept = (await gateway.stores.requestLogs.query({ limit: 100 })).filter((row) => row.createdAt < startedAt);
      expect(kept.map((row) => row.id).sort()).toEqual(rows.map((row) => row.id).sort());
      expect(kept.find((row) => row.id === rows[3]?.id)).toMatchObject({ model: 'gpt-4o-mini', status: 200, promptTokens: 10, completionTokens: 5 });
    } finally {
      await gateway.shutdown();
    }

    const after = await cli('migrate', '--status', '--json', '--config', configPath);
    const listed = JSON.parse(after.stdout.join('\n')) as Array<{ name: string; state: string; release: string | null }>;
    expect(listed.map(({ state }) => state)).toEqual(Object.keys(MIGRATIONS).map(() => 'applied'));
    // Only what this release applied has a record of it; the rest ran before releases were recorded.
    for (const name of ADDED_BY_THIS_RELEASE) expect(listed.find((migration) => migration.name === name)?.release).toBe(releaseVersion());
    expect(listed.find(({ name }) => name === '0001-initial')?.release).toBeNull();
  });

  it('switchyard migrate applies what is pending, saying each, and then that the schema is up to date', async () => {
    await (await openAsReleaseBefore(url)).close();
    const migrated = await cli('migrate', '--config', configPath);
    expect(migrated.code).toBe(0);
    expect(migrated.stderr.slice(1)).toEqual([...migrationMessages()]);
    const again = await cli('migrate', '--config', configPath);
    expect(again.stderr.slice(1)).toEqual([`database schema up to date (${LATEST})`]);
  });
});
