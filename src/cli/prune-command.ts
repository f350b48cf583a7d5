import { requestLogRetentionMs } from '../config/index.js';
import { requestLogRetention, rowsRemoved, vacuumSqlite, type RetentionPass } from '../store/index.js';
import { CliFailure, EXIT_TEMPFAIL, EXIT_USAGE, type CliIo } from './cli-io.js';
import { withStores, type ConfigOption } from './cli-stores.js';

export interface PruneOptions extends ConfigOption {
  json?: boolean;
  /** SQLite: turn on incremental vacuum and rebuild the file (`VACUUM`) after the pass. */
  vacuum?: boolean;
}

/**
 * `switchyard requests prune`: one retention pass now, as the gateway runs them hourly
 * (docs/request-log-retention.md), saying what it removed. Exit 75 (EX_TEMPFAIL) when another
 * process is running a pass on the same PostgreSQL database: nothing was done, try again later.
 */
export async function pruneRequestsCommand(options: PruneOptions, io: CliIo): Promise<number> {
  return withStores(options, io, async (stores, config) => {
    if (options.vacuum === true && stores.database.sqlite === null)
      throw new CliFailure(
        '--vacuum is for SQLite; on PostgreSQL retention drops whole partitions, and autovacuum reuses the space of deleted rows',
        EXIT_USAGE,
      );
    const retentionMs = requestLogRetentionMs(config.request_log.retention);
    const pass = await requestLogRetention(stores.database, { retentionMs }).prune();
    if (options.json === true) io.stdout(JSON.stringify({ ...pass, rows_removed: rowsRemoved(pass) }, null, 2));
    else for (const line of describePass(pass, config.request_log.retention)) io.stdout(line);
    if (pass.skipped === 'busy') {
      io.stderr('another process is running a retention pass on this database: nothing was done; try again later');
      return EXIT_TEMPFAIL;
    }
    if (options.vacuum === true) {
      const { bytesBefore, bytesAfter, durationMs } = vacuumSqlite(stores.database);
      io.stdout(
        `vacuumed: ${mebibytes(bytesBefore)} → ${mebibytes(bytesAfter)} in ${Math.round(durationMs)} ms; free pages are now given back after every pass`,
      );
    }
    return 0;
  });
}

/** What a pass did, in the lines the command prints (and the gateway's log line says in fields). */
export function describePass(pass: RetentionPass, retention: string): string[] {
  const lines: string[] = [];
  if (pass.skipped === 'forever') lines.push('request_log.retention is forever: no rows removed');
  else if (pass.skipped === 'busy') lines.push('skipped: another process holds the retention lock');
  else {
    const cutoff = new Date(pass.cutoff ?? 0).toISOString();
    lines.push(
      `removed ${rowsRemoved(pass)} request log rows that started before ${cutoff} (request_log.retention ${retention.trim()}) in ${Math.round(pass.durationMs)} ms${pass.complete ? '' : ' (stopped before the end)'}`,
    );
    if (pass.rowsDeleted > 0) lines.push(`  ${pass.rowsDeleted} rows deleted in batches`);
    for (const { name, rows } of pass.partitionsDropped) lines.push(`  partition ${name} dropped: ${rows} rows`);
    if (pass.pagesFreed > 0) lines.push(`  ${pass.pagesFreed} free pages given back to the file system`);
  }
  if (pass.partitionsCreated.length > 0) lines.push(`  partitions made for the coming days: ${pass.partitionsCreated.join(', ')}`);
  for (const { name, reason } of pass.partitionsDeferred) lines.push(`  partition ${name} left for the next pass: ${reason}`);
  return lines;
}

function mebibytes(bytes: number): string {
  return `${(bytes / 1_048_576).toFixed(1)} MiB`;
}
