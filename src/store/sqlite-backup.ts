import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';

export interface SqliteBackup {
  /** The backup file's size. */
  bytes: number;
  /** Every table of the copy with its rows, by name. */
  tables: Array<{ name: string; rows: number }>;
  /** The copy's last migration, and the release that applied it when that was recorded. */
  migration: string | null;
  release: string | null;
}

/**
 * Pages copied per step after the first. All of them: one step reads one snapshot, so writes by
 * the running gateway meanwhile can neither tear the copy nor make SQLite restart it (a backup in
 * small steps starts over whenever another connection writes between two steps, which under a
 * steady request log could be forever). A reader never blocks a writer in WAL mode.
 */
const ALL_PAGES = 0x7fffffff;

/**
 * Copies a SQLite database with SQLite's online backup, safe while gateways write to it (the
 * write-ahead log included, which a file copy misses). The copy is written beside `target` under
 * a temporary name, checked, turned into a single self-contained file (no -wal to carry along),
 * and renamed over `target` only when whole.
 */
export async function backupSqlite(source: string, target: string): Promise<SqliteBackup> {
  const temporary = join(dirname(target), `.${basename(target)}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
  try {
    const database = new SqliteDatabase(source, { fileMustExist: true });
    try {
      await database.backup(temporary, { progress: () => ALL_PAGES });
    } finally {
      database.close();
    }
    const described = describeCopy(temporary);
    renameSync(temporary, target);
    syncDirectory(dirname(target));
    return { ...described, bytes: statSync(target).size };
  } finally {
    rmSync(temporary, { force: true });
  }
}

function describeCopy(path: string): Omit<SqliteBackup, 'bytes'> {
  const copy = new SqliteDatabase(path, { fileMustExist: true });
  try {
    // The copy keeps the source's WAL mode; a rollback journal makes it one file that opens
    // anywhere, read-only too. The gateway that opens it after a restore turns WAL on again.
    copy.pragma('journal_mode = DELETE');
    const check = copy.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new Error(`the copy failed SQLite's check: ${String(check)}`);
    const names = (
      copy.prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name").all() as Array<{ name: string }>
    ).map(({ name }) => name);
    const tables = names.map((name) => ({
      name,
      rows: (copy.prepare(`select count(*) as count from "${name.replace(/"/g, '""')}"`).get() as { count: number }).count,
    }));
    const migration = names.includes('kysely_migration')
      ? ((copy.prepare('select max(name) as name from kysely_migration').get() as { name: string | null }).name ?? null)
      : null;
    const release =
      migration !== null && names.includes('switchyard_schema_history')
        ? ((copy.prepare('select release from switchyard_schema_history where migration = ?').get(migration) as { release: string } | undefined)?.release ??
          null)
        : null;
    return { tables, migration, release };
  } finally {
    copy.close();
  }
}

/** A rename is durable once its directory is synced. */
function syncDirectory(directory: string): void {
  const descriptor = openSync(directory, 'r');
  try {
    fsyncSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
}
