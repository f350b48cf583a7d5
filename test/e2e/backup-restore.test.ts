import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import SqliteDatabase from 'better-sqlite3';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { startGateway } from '../../src/gateway.js';
import { createLogger } from '../../src/observability/logger.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { openStores } from '../../src/store/index.js';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../fake-upstreams/openai-upstream.js';
import { requestLogEntry } from '../support/request-log-entries.js';
import { cli } from '../support/run-cli.js';

/** The schema a backup of this release says it holds. */
const LATEST_MIGRATION = Object.keys(MIGRATIONS).at(-1) as string;

const BIN = fileURLToPath(new URL('../../bin/switchyard.js', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'switchyard-backup-'));
const started = new Set<ReturnType<typeof spawn>>();

afterAll(() => {
  for (const child of started) child.kill('SIGKILL');
  rmSync(root, { recursive: true, force: true });
});

/**
 * `checkpointPages`: how long the write-ahead log may grow before SQLite copies it into the
 * database file. Large, every write of the running gateway stays in the log, which is what a copy
 * of the database file alone misses; and the backup must then carry it.
 */
function writeConfig(directory: string, upstreamUrl: string, checkpointPages = 300): string {
  mkdirSync(directory, { recursive: true });
  const path = join(directory, 'switchyard.yaml');
  writeFileSync(
    path,
    stringify({
      server: { host: '127.0.0.1', port: 0 },
      database: { url: `sqlite:${join(directory, 'switchyard.db')}`, sqlite_checkpoint_pages: checkpointPages },
      logging: { level: 'warn', access: false },
      request_log: { flush_interval_ms: 20 },
      upstreams: [{ id: 'primary', provider: 'openai', base_url: upstreamUrl, api_key: 'sk-upstream' }],
      models: [{ id: 'gpt-4o-mini', type: 'chat', routes: [{ upstream: 'primary', model: 'gpt-4o-mini' }] }],
    }),
  );
  return path;
}

function switchyardEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SWITCHYARD_')));
}

/** `switchyard serve` in a process of its own; resolves with its URL and the admin token of its banner. */
async function serve(configPath: string): Promise<{ url: string; adminToken: string; stop(): Promise<number | null> }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--config', configPath], { env: switchyardEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
  started.add(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  void exited.then(() => started.delete(child));
  const lines: string[] = [];
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stderr as NodeJS.ReadableStream }).on('line', (line) => {
      lines.push(line);
      if (line === '' && lines.some((seen) => seen.includes('admin token:'))) resolve();
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${lines.join('\n')}`)));
  });
  const text = lines.join('\n');
  return {
    url: /listening on (\S+)/.exec(text)?.[1] as string,
    adminToken: /admin token: (\S+)/.exec(text)?.[1] as string,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** A command of the built package in a process of its own, so that the test's own load goes on while it runs. */
async function run(...argv: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...argv], { env: switchyardEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, stdout, stderr };
}

function readRows(path: string, query: string): Array<Record<string, unknown>> {
  const database = new SqliteDatabase(path, { readonly: true, fileMustExist: true });
  try {
    return database.prepare(query).all() as Array<Record<string, unknown>>;
  } finally {
    database.close();
  }
}

describe('switchyard backup of a SQLite database while the gateway runs and writes', () => {
  let upstream: FakeOpenAIUpstream;
  beforeAll(async () => {
    upstream = await startFakeOpenAIUpstream();
  });
  afterAll(async () => {
    await upstream.close();
  });

  it('restores to a gateway that serves every token that existed when the backup began, with the request log as it was', async () => {
    const live = join(root, 'live');
    const configPath = writeConfig(live, upstream.url, 1_000_000);
    const databasePath = join(live, 'switchyard.db');
    // A request log of some size, so that the copy takes long enough for writes to land during it.
    const seeded = await openStores(`sqlite:${databasePath}`);
    for (let batch = 0; batch < 40; batch++) {
      await seeded.requestLogs.insertBatch(
        Array.from({ length: 500 }, (_, index) => requestLogEntry(Date.parse('2026-11-01') + batch * 500 + index, { tokenId: null })),
      );
    }
    await seeded.close();

    const gateway = await serve(configPath);
    const admin = { authorization: `Bearer ${gateway.adminToken}`, 'content-type': 'application/json' };
    const secrets = new Map<string, string>();
    const createToken = async (name: string): Promise<void> => {
      const answer = await fetch(`${gateway.url}/admin/v1/tokens`, { method: 'POST', headers: admin, body: JSON.stringify({ team: 'load', name }) });
      expect(answer.status).toBe(201);
      const { id, secret } = (await answer.json()) as { id: string; secret: string };
      secrets.set(id, secret);
    };
    for (let index = 0; index < 4; index++) await createToken(`before-${index}`);
    const made = await cli('tokens', 'create', '--team', 'load', '--name', 'cli-before', '--config', configPath);
    expect(made.code).toBe(0);
    const cliToken = made.stdout[0] as string;

    // Load: chat requests (each a request-log row) and tokens made through the admin API, until stopped.
    let loading = true;
    let served = 0;
    const callers = [...secrets.values(), cliToken];
    const chat = async (worker: number): Promise<void> => {
      for (let turn = 0; loading; turn++) {
        const answer = await fetch(`${gateway.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${callers[(worker + turn) % callers.length] as string}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `worker ${worker} turn ${turn}` }] }),
        });
        expect(answer.status).toBe(200);
        await answer.arrayBuffer();
        served += 1;
      }
    };
    const makeTokens = async (): Promise<void> => {
      for (let index = 0; loading; index++) await createToken(`during-${index}`);
    };
    const load = Promise.all([...Array.from({ length: 6 }, (_, worker) => chat(worker)), makeTokens()]);
    while (served < 200) await new Promise((resolve) => setTimeout(resolve, 20));

    // What the database holds, committed, when the backup begins.
    const tokensBefore = readRows(databasePath, 'select id from tokens').map((row) => row['id'] as string);
    const rowsBefore = readRows(databasePath, 'select id from request_logs').map((row) => row['id'] as string);
    const servedBefore = served;
    // What `cp` of the database file makes meanwhile: the gateway's writes are in the log beside it.
    const plainCopy = join(root, 'plain-copy.db');
    copyFileSync(databasePath, plainCopy);
    const backupPath = join(root, 'backups', 'switchyard-backup.db');
    mkdirSync(join(root, 'backups'));
    const backup = await run('backup', backupPath, '--config', configPath);
    const servedDuring = served - servedBefore;
    await new Promise((resolve) => setTimeout(resolve, 200));
    loading = false;
    await load;
    expect(await gateway.stop()).toBe(0);

    expect(backup.code, backup.stderr).toBe(0);
    // Writes went on while it ran.
    expect(servedDuring).toBeGreaterThan(0);
    expect(backup.stdout).toMatch(
      new RegExp(`^Backed up sqlite:.*switchyard\\.db to .*switchyard-backup\\.db \\(\\d+\\.\\d [KM]iB, schema ${LATEST_MIGRATION}, checked\\)\\. Rows:$`, 'm'),
    );
    const backedUpTokens = readRows(backupPath, 'select count(*) as count from tokens')[0]?.['count'] as number;
    expect(backup.stdout).toMatch(new RegExp(`^ +tokens +${backedUpTokens}$`, 'm'));
    expect(readRows(backupPath, 'pragma integrity_check')).toEqual([{ integrity_check: 'ok' }]);
    // The plain copy lost every token the running gateway made; the backup has them.
    const copiedTokens = readRows(plainCopy, 'select id from tokens').map((row) => row['id'] as string);
    expect(tokensBefore.filter((id) => !copiedTokens.includes(id)).length).toBeGreaterThanOrEqual(4);
    // Nothing but the backup was left beside it.
    expect(existsSync(`${backupPath}-wal`)).toBe(false);

    // Restore into a fresh data directory: the backup becomes the database file, then a gateway starts on it.
    const restored = join(root, 'restored');
    const restoredConfig = writeConfig(restored, upstream.url);
    copyFileSync(backupPath, join(restored, 'switchyard.db'));
    const restoredRows = readRows(join(restored, 'switchyard.db'), 'select * from request_logs order by id');
    const restoredTokens = readRows(join(restored, 'switchyard.db'), 'select id from tokens').map((row) => row['id'] as string);
    const restoredGateway = await startGateway(loadConfig({ configPath: restoredConfig, env: {} }).config, { logger: createLogger('silent') });
    try {
      expect(restoredTokens).toEqual(expect.arrayContaining(tokensBefore));
      const cliTokenId = readRows(join(restored, 'switchyard.db'), "select id from tokens where name = 'cli-before'")[0]?.['id'] as string;
      secrets.set(cliTokenId, cliToken);
      // Every token that existed when the backup began, and any made during it that the backup holds.
      for (const id of restoredTokens.filter((token) => secrets.has(token))) {
        const models = await fetch(`${restoredGateway.url}/v1/models`, { headers: { authorization: `Bearer ${secrets.get(id) as string}` } });
        expect({ id, status: models.status }).toEqual({ id, status: 200 });
      }
      expect(tokensBefore.filter((id) => secrets.has(id)).length).toBeGreaterThanOrEqual(5);
    } finally {
      await restoredGateway.shutdown();
    }

    // The request log: every row committed before the backup began, each as the live database has it.
    const restoredIds = new Set(restoredRows.map((row) => row['id'] as string));
    expect(rowsBefore.filter((id) => !restoredIds.has(id))).toEqual([]);
    const liveRows = new Map(readRows(databasePath, 'select * from request_logs').map((row) => [row['id'] as string, row]));
    for (const row of restoredRows) expect(row).toEqual(liveRows.get(row['id'] as string));
    expect(statSync(backupPath).size).toBeGreaterThan(0);
  }, 60_000);
});

describe('switchyard backup: the file it writes', () => {
  let directory: string;
  let configPath: string;
  beforeAll(async () => {
    directory = join(root, 'files');
    configPath = writeConfig(directory, 'http://127.0.0.1:9/v1');
    expect((await cli('tokens', 'create', '--team', 'a', '--config', configPath)).code).toBe(0);
  });

  it('refuses to replace a file that exists unless --force, and then replaces it whole', async () => {
    const target = join(directory, 'existing.db');
    writeFileSync(target, 'not a database');
    const refused = await cli('backup', target, '--config', configPath);
    expect(refused.code).toBe(1);
    expect(refused.stderr.at(-1)).toBe(`switchyard: ${target} exists; pass --force to replace it`);
    expect(readRows(configPath.replace('switchyard.yaml', 'switchyard.db'), 'select count(*) as count from tokens')).toEqual([{ count: 1 }]);
    const forced = await cli('backup', target, '--force', '--config', configPath);
    expect(forced.code).toBe(0);
    expect(readRows(target, 'select count(*) as count from tokens')).toEqual([{ count: 1 }]);
  });

  it('refuses to write over the database itself, even with --force', async () => {
    const itself = await cli('backup', join(directory, 'switchyard.db'), '--force', '--config', configPath);
    expect(itself.code).toBe(1);
    expect(itself.stderr.at(-1)).toMatch(/is the database itself/);
  });

  it('for PostgreSQL, says what to run (pg_dump, pg_restore) without the password, and exits 1: nothing was written', async () => {
    const postgresConfig = join(directory, 'postgres.yaml');
    writeFileSync(
      postgresConfig,
      stringify({ database: { url: 'postgres://switchyard:s3cret@db.internal:6432/gateway?options=-c%20search_path%3Dtenant_a' } }),
    );
    const answer = await cli('backup', join(directory, 'pg.dump'), '--config', postgresConfig);
    expect(answer.code).toBe(1);
    const text = answer.stderr.join('\n');
    expect(text).not.toContain('s3cret');
    expect(text).toContain(
      `pg_dump --format=custom --host=db.internal --port=6432 --username=switchyard --dbname=gateway --schema=tenant_a --file=${join(directory, 'pg.dump')}`,
    );
    expect(text).toContain(
      `pg_restore --clean --if-exists --no-owner --single-transaction --host=db.internal --port=6432 --username=switchyard --dbname=gateway ${join(directory, 'pg.dump')}`,
    );
    expect(existsSync(join(directory, 'pg.dump'))).toBe(false);
  });
});
