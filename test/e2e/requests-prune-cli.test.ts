import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { stringify } from 'yaml';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { openStores } from '../../src/store/index.js';
import { RETENTION_LOCK_CLASS } from '../../src/store/request-log-retention.js';
import { describeEachBackend } from '../support/database-backends.js';
import { requestLogEntry } from '../support/request-log-entries.js';
import { cli } from '../support/run-cli.js';

const DAY = 86_400_000;

describeEachBackend('switchyard requests prune', (backend) => {
  let url: string;
  let dispose: () => Promise<void>;
  let directory: string;

  beforeEach(async () => {
    ({ url, dispose } = await backend.empty());
    directory = mkdtempSync(join(tmpdir(), 'switchyard-prune-'));
  });
  afterEach(async () => {
    await dispose();
    rmSync(directory, { recursive: true, force: true });
  });

  function configWith(retention: string): string {
    const path = join(directory, `switchyard-${retention}.yaml`);
    writeFileSync(path, stringify({ database: { url }, request_log: { retention }, upstreams: [], models: [] }));
    return path;
  }

  /** Five rows of 20 days ago and three of an hour ago, written as the gateway writes them. */
  async function logRows(): Promise<string[]> {
    const now = Date.now();
    const rows = [
      ...Array.from({ length: 5 }, (_, index) => requestLogEntry(now - 20 * DAY + index * 1_000)),
      ...Array.from({ length: 3 }, (_, index) => requestLogEntry(now - 3_600_000 + index * 1_000)),
    ];
    const stores = await openStores(url);
    try {
      await stores.requestLogs.insertBatch(rows);
    } finally {
      await stores.close();
    }
    return rows.slice(5).map((row) => row.id);
  }

  async function loggedIds(): Promise<string[]> {
    const stores = await openStores(url);
    try {
      return (await stores.requestLogs.query({ limit: 100 })).map((row) => row.id).sort();
    } finally {
      await stores.close();
    }
  }

  it('removes the rows older than request_log.retention and says how many', async () => {
    const kept = await logRows();
    const pruned = await cli('requests', 'prune', '--config', configWith('7d'));
    expect(pruned.code).toBe(0);
    expect(pruned.stderr[0]).toMatch(/^database: /);
    expect(pruned.stdout[0]).toMatch(/^removed 5 request log rows that started before \d{4}-\d\d-\d\dT[\d:.]+Z \(request_log\.retention 7d\) in \d+ ms$/);
    expect(pruned.stdout).toContain('  5 rows deleted in batches');
    expect(await loggedIds()).toEqual(kept.sort());

    const json = await cli('requests', 'prune', '--json', '--config', configWith('7d'));
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout.join('\n'))).toMatchObject({ skipped: null, rows_removed: 0, complete: true });
  });

  it('removes nothing when the retention is forever, and says so', async () => {
    await logRows();
    const pruned = await cli('requests', 'prune', '--config', configWith('forever'));
    expect(pruned.code).toBe(0);
    expect(pruned.stdout[0]).toBe('request_log.retention is forever: no rows removed');
    expect(await loggedIds()).toHaveLength(8);
  });

  if (backend.name === 'postgres') {
    it('exits 75, doing nothing, while another process runs a pass', async () => {
      await logRows();
      const holder = new pg.Client({ connectionString: url });
      await holder.connect();
      try {
        await holder.query('select pg_advisory_lock($1, hashtext(current_schema()))', [RETENTION_LOCK_CLASS]);
        const pruned = await cli('requests', 'prune', '--config', configWith('7d'));
        expect(pruned.code).toBe(75);
        expect(pruned.stdout).toEqual(['skipped: another process holds the retention lock']);
        expect(pruned.stderr.at(-1)).toBe('another process is running a retention pass on this database: nothing was done; try again later');
        expect(await loggedIds()).toHaveLength(8);
      } finally {
        await holder.end();
      }
    });

    it('refuses --vacuum, which is for SQLite', async () => {
      const pruned = await cli('requests', 'prune', '--vacuum', '--config', configWith('7d'));
      expect(pruned.code).toBe(64);
      expect(pruned.stderr.at(-1)).toContain('--vacuum is for SQLite');
    });
  } else {
    it('with --vacuum, turns on incremental vacuum in a database made without it', async () => {
      // A database with a table before this release opened it: made without incremental vacuum.
      const made = new SqliteDatabase(url.slice('sqlite:'.length));
      made.exec('create table made_before (id integer primary key)');
      made.close();
      await logRows();
      const autoVacuum = async () => {
        const stores = await openStores(url);
        try {
          return stores.database.sqlite?.pragma('auto_vacuum', { simple: true });
        } finally {
          await stores.close();
        }
      };
      expect(await autoVacuum()).toBe(0);
      const pruned = await cli('requests', 'prune', '--vacuum', '--config', configWith('7d'));
      expect(pruned.code).toBe(0);
      expect(pruned.stdout.at(-1)).toMatch(/^vacuumed: [\d.]+ MiB → [\d.]+ MiB in \d+ ms; free pages are now given back after every pass$/);
      expect(await autoVacuum()).toBe(2);
    });
  }
});
