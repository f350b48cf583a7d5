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
      expect(() => other.prepare("insert into teams (id, name, limits, created_at, updated_at) values ('other', 'other', null, 1, 1)").run()).toThrow(/locked|busy/i);
      await transaction.insertInto('teams').values({ id: 'search', name: 'search', limits: null, created_at: 1, updated_at: 1 }).execute();
    });
    expect((await database.db.selectFrom('teams').select('id').execute()).map((row) => row.id)).toEqual(['search']);
  });
});
