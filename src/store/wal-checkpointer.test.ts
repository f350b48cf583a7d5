import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import SqliteDatabase from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStores, type Stores } from './index.js';
import type { RequestLogEntry } from './request-log-store.js';
import { WalCheckpointer } from './wal-checkpointer.js';

let directory: string;
let stores: Stores | null = null;
let sequence = 0;

beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), 'switchyard-wal-'));
});
afterEach(async () => {
  await stores?.close();
  stores = null;
  rmSync(directory, { recursive: true, force: true });
});

function rows(count: number): RequestLogEntry[] {
  return Array.from({ length: count }, () => ({
    id: `req_${String(++sequence).padStart(12, '0')}`,
    clientRequestId: null,
    createdAt: sequence,
    tokenId: 'tok_1',
    team: 'search',
    project: null,
    endpoint: 'chat.completions',
    model: 'gpt-4o-mini',
    upstream: 'openai-a',
    sessionId: `session-${sequence}`,
    status: 200,
    latencyMs: 1.5,
    ttfbMs: 1.2,
    promptTokens: 10,
    completionTokens: 20,
    usageSource: 'upstream',
    errorCode: null,
  }));
}

/** 2,000 rows in batches, as the request-log queue writes them: some hundreds of WAL frames. */
async function burst(target: Stores): Promise<void> {
  for (let batch = 0; batch < 20; batch++) await target.requestLogs.insertBatch(rows(100));
}

const walSize = (file: string): number => statSync(`${file}-wal`).size;

function autocheckpointPages(sqlite: SqliteDatabase.Database): number {
  return sqlite.pragma('wal_autocheckpoint', { simple: true }) as number;
}

describe('WAL checkpoints on a worker thread', () => {
  it('turns off checkpoints inside commits, and keeps the WAL from growing by checkpointing it elsewhere', async () => {
    const file = join(directory, 'switchyard.db');
    const failures: unknown[] = [];
    stores = await openStores(`sqlite:${file}`, { backgroundCheckpoints: { intervalMs: 20, onFailure: (error) => failures.push(error) } });
    const { sqlite, walCheckpointer } = stores.database;
    expect(walCheckpointer).not.toBeNull();
    expect(autocheckpointPages(sqlite as SqliteDatabase.Database)).toBe(0);

    await burst(stores);
    const afterFirst = walSize(file);
    // Wait for a checkpoint that copied every frame: the next write then starts the WAL over.
    for (;;) {
      const report = await (walCheckpointer as WalCheckpointer).nextReport();
      if (report.busy === 0 && report.logFrames > 0 && report.checkpointedFrames === report.logFrames) break;
    }
    await burst(stores);
    // Without a checkpoint the second burst would have appended to the first: about twice the size.
    expect(walSize(file)).toBeLessThanOrEqual(afterFirst);
    expect(await stores.requestLogs.query({ limit: 5000 })).toHaveLength(4000);
    expect(failures).toEqual([]);
  });

  it('is not started for an in-memory database, nor unless asked', async () => {
    stores = await openStores('sqlite::memory:', { backgroundCheckpoints: { intervalMs: 20, onFailure: () => undefined } });
    expect(stores.database.walCheckpointer).toBeNull();
    await stores.close();
    stores = await openStores(`sqlite:${join(directory, 'cli.db')}`);
    expect(stores.database.walCheckpointer).toBeNull();
    expect(autocheckpointPages(stores.database.sqlite as SqliteDatabase.Database)).toBe(1000);
  });

  it('gives checkpoints back to SQLite when the worker fails, and reports it', async () => {
    const file = join(directory, 'switchyard.db');
    const sqlite = new SqliteDatabase(file);
    sqlite.pragma('journal_mode = WAL');
    const failure = new Promise<unknown>((resolve) => {
      new WalCheckpointer(sqlite, file, {
        intervalMs: 20,
        onFailure: resolve,
        script: new URL('data:text/javascript,throw new Error("checkpoint worker broke")'),
      });
    });
    expect(String(await failure)).toContain('checkpoint worker broke');
    expect(autocheckpointPages(sqlite)).toBe(1000);
    sqlite.close();
  });

  it('stops its worker on close and leaves SQLite its default', async () => {
    const file = join(directory, 'switchyard.db');
    const sqlite = new SqliteDatabase(file);
    sqlite.pragma('journal_mode = WAL');
    const failures: unknown[] = [];
    const checkpointer = new WalCheckpointer(sqlite, file, { intervalMs: 20, onFailure: (error) => failures.push(error) });
    await checkpointer.nextReport();
    await checkpointer.close();
    expect(autocheckpointPages(sqlite)).toBe(1000);
    expect(checkpointer.status.failed).toBe(false);
    expect(failures).toEqual([]);
    sqlite.close();
  });

  it('does not keep a process alive that has nothing else to do', () => {
    // The built module, in a process of its own: a worker that held the event loop would hang it.
    const storeModule = fileURLToPath(new URL('../../dist/store/index.js', import.meta.url));
    const script = join(directory, 'open-and-leave.mjs');
    writeFileSync(
      script,
      `import { openStores } from ${JSON.stringify(storeModule)};
      await openStores(${JSON.stringify(`sqlite:${join(directory, 'alive.db')}`)}, { backgroundCheckpoints: { intervalMs: 20, onFailure: () => process.exit(3) } });
      setTimeout(() => console.log('checkpoints ran while the process was open'), 100).unref();`,
    );
    const child = spawnSync(process.execPath, [script], { timeout: 20_000, encoding: 'utf8' });
    expect({ status: child.status, signal: child.signal, stderr: child.stderr }).toEqual({ status: 0, signal: null, stderr: '' });
  });
});
