import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { backupSqlite, type SqliteBackup } from '../store/index.js';
import { CliFailure, redactUrl, type CliIo } from './cli-io.js';
import { commandConfig, type ConfigOption } from './cli-stores.js';

export interface BackupOptions extends ConfigOption {
  force?: boolean;
}

/**
 * `switchyard backup FILE`: SQLite's online backup of the database, safe while gateways run. For
 * PostgreSQL it writes nothing, prints the pg_dump and pg_restore to run, and exits 1, so that a
 * scheduled backup pointed at the wrong kind of database fails loudly rather than silently.
 */
export async function backupCommand(file: string, options: BackupOptions, io: CliIo): Promise<number> {
  const config = commandConfig(options, io);
  const url = config.database.url;
  const target = resolve(file);
  if (!url.startsWith('sqlite:')) {
    for (const line of postgresInstructions(url, target)) io.stderr(line);
    throw new CliFailure('nothing was written: back PostgreSQL up with pg_dump, as above', 1);
  }
  const path = url.slice('sqlite:'.length);
  if (path === ':memory:' || path === '') throw new CliFailure(`database.url is ${url}: an in-memory database has nothing on disk to back up`, 1);
  const source = resolve(path);
  if (!existsSync(source)) throw new CliFailure(`there is no database at ${source} yet: nothing to back up`, 1);
  if (source === target) throw new CliFailure(`${target} is the database itself; write the backup elsewhere`, 1);
  if (existsSync(target) && options.force !== true) throw new CliFailure(`${target} exists; pass --force to replace it`, 1);
  if (!existsSync(dirname(target))) throw new CliFailure(`the directory ${dirname(target)} does not exist`, 1);
  const backup = await backupSqlite(source, target);
  for (const line of describeBackup(redactUrl(url), target, backup)) io.stdout(line);
  return 0;
}

function describeBackup(source: string, target: string, backup: SqliteBackup): string[] {
  const schema = backup.migration === null ? 'no schema' : `schema ${backup.migration}${backup.release === null ? '' : ` of switchyard ${backup.release}`}`;
  const width = Math.max(...backup.tables.map(({ name }) => name.length), 0);
  return [
    `Backed up ${source} to ${target} (${size(backup.bytes)}, ${schema}, checked). Rows:`,
    ...backup.tables.map(({ name, rows }) => `  ${name.padEnd(width)}  ${rows}`),
  ];
}

function size(bytes: number): string {
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** pg_dump and pg_restore with the URL's parts; its password is never printed (PGPASSWORD or ~/.pgpass supply it). */
function postgresInstructions(url: string, target: string): string[] {
  const parsed = new URL(url);
  const searchPath = /-c\s*search_path\s*=\s*([^\s,]+)/.exec(parsed.searchParams.get('options') ?? '')?.[1];
  const connection = [
    ...(parsed.hostname === '' ? [] : [`--host=${quote(decodeURIComponent(parsed.hostname))}`]),
    `--port=${parsed.port === '' ? '5432' : parsed.port}`,
    ...(parsed.username === '' ? [] : [`--username=${quote(decodeURIComponent(parsed.username))}`]),
    `--dbname=${quote(decodeURIComponent(parsed.pathname.slice(1)))}`,
  ];
  const dump = ['pg_dump', '--format=custom', ...connection, ...(searchPath === undefined ? [] : [`--schema=${quote(searchPath)}`]), `--file=${quote(target)}`];
  const restore = ['pg_restore', '--clean', '--if-exists', '--no-owner', '--single-transaction', ...connection, quote(target)];
  return [
    `switchyard backup copies SQLite databases; ${redactUrl(url)} is PostgreSQL. Back it up with pg_dump, safe while gateways run`,
    `(the URL's password comes from PGPASSWORD or ~/.pgpass; it is not printed):`,
    `  ${dump.join(' ')}`,
    'Restore it with every gateway stopped (docs/operations.md, "Back up and restore"):',
    `  ${restore.join(' ')}`,
  ];
}

/** A word the shell takes as it is. */
function quote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
