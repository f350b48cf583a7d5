import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from './open-database.js';

describe('SQLite transactions', () => {
  let directory: string;
  let database: Database;
  let other: SqliteDatabase.Database;

  beforeEach(async () => {
    directory = mkdtempSync(join(tmpdir(), 'switchyard-sqlite-'));
    database = await openDatabase(`sqlite:${join(directory, 'switchyard.db')}`);
    // Another process's connection (a gateway writing its log), which does not wait for locks.
    other = new SqliteDatabase(join(directory, 'switchyard.db'));
    other.pragma('busy_timeout = 0');
  });
  afterEach(async () => {
    other.close();
    await database.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it('hold the write lock from their start: a read-then-write transaction is not failed by a write committed in between', async () => {
    await database.db.transaction().execute(async (transaction) => {
      await transaction.selectFrom('teams').select('id').execute();
      // With a deferred begin this write would commit, and the insert below would fail with "database is locked".
      expect(() => other.prepare("insert into teams (id, name, limits, created_at, updated_at) values ('other', 'other', null, 1, 1)").run()).toThrow(
        /locked|busy/i,
      );
      await transaction.insertInto('teams').values({ id: 'search', name: 'search', limits: null, created_at: 1, updated_at: 1 }).execute();
    });
    expect((await database.db.selectFrom('teams').select('id').execute()).map((row) => row.id)).toEqual(['search']);
  });

  it("wait for another connection's lock with timers, not the thread: the write lands once the lock is released", async () => {
    other.exec('begin exclusive');
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 1);
    setTimeout(() => other.exec('commit'), 60);
    try {
      await database.db.insertInto('teams').values({ id: 'late', name: 'late', limits: null, created_at: 1, updated_at: 1 }).execute();
      await database.db.transaction().execute(async (transaction) => {
        await transaction.insertInto('teams').values({ id: 'later', name: 'later', limits: null, created_at: 1, updated_at: 1 }).execute();
      });
    } finally {
      clearInterval(ticker);
    }
    // busy_timeout would have held the thread until the commit: no timer could have run.
    expect(ticks).toBeGreaterThan(0);
    expect((await database.db.selectFrom('teams').select('id').orderBy('id').execute()).map((row) => row.id)).toEqual(['late', 'later']);
  });
});
