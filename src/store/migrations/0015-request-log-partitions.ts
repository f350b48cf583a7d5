import { CompiledQuery, type Kysely } from 'kysely';
import {
  addDayPartition,
  DAY_MS,
  DEFAULT_PARTITION,
  LEGACY_PARTITION,
  PARTITION_DAYS_AHEAD,
  REQUEST_LOG_INDEXES,
  utcDayStart,
  type RunSql,
} from '../request-log-partitions.js';
import { migrationDialect } from './migration-dialect.js';

/**
 * PostgreSQL: the request log becomes a table partitioned by range of `created_at`, one partition
 * per UTC day, so that retention drops whole days instead of deleting rows one by one
 * (docs/request-log-retention.md). The key becomes `(id, created_at)` (a partitioned table's key
 * must hold the partition key); every index stays, as a partitioned index.
 *
 * The table as it was is kept as one partition, `request_logs_legacy`, of everything up to the end
 * of the day this runs (or of the day of its newest row, if later): renamed, its indexes attached
 * to the new ones as they are (only the new key's index is built), and a CHECK constraint of its
 * range added first so that ATTACH does not scan it again. Retention deletes its rows in batches
 * as they expire and drops it once all of it has. An empty table is not kept. Then the partitions
 * of the coming days, and a DEFAULT partition so that an insert never fails for want of one.
 *
 * SQLite: nothing; its rows are deleted in batches.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (migrationDialect(db) !== 'postgres') return;
  const run = runOn(db);
  const today = utcDayStart(Date.now());
  const [newest] = await run('select max(created_at) as newest from request_logs');
  const newestAt = newest?.['newest'] === null || newest?.['newest'] === undefined ? null : Number(newest['newest']);

  await run(`alter table request_logs rename to ${LEGACY_PARTITION}`);
  // Its key (id alone) goes: the partitioned table's key is (id, created_at), built on attach.
  const [key] = await run(`select conname as name from pg_constraint where conrelid = to_regclass('${LEGACY_PARTITION}') and contype = 'p'`);
  if (key !== undefined) await run(`alter table ${LEGACY_PARTITION} drop constraint ${String(key['name'])}`);
  // Its indexes keep their definitions under new names: the partitioned table's take the old ones.
  const indexes = await run(`select indexname as name from pg_indexes where schemaname = current_schema() and tablename = '${LEGACY_PARTITION}'`);
  for (const { name } of indexes) {
    const old = String(name);
    if (old.startsWith('request_logs_')) await run(`alter index ${old} rename to ${LEGACY_PARTITION}_${old.slice('request_logs_'.length)}`);
  }

  await run(`create table request_logs (like ${LEGACY_PARTITION} including defaults, primary key (id, created_at)) partition by range (created_at)`);
  for (const statement of REQUEST_LOG_INDEXES) await run(statement);

  let firstDay = today;
  if (newestAt === null) {
    await run(`drop table ${LEGACY_PARTITION}`);
  } else {
    const end = Math.max(today + DAY_MS, utcDayStart(newestAt) + DAY_MS);
    await run(`alter table ${LEGACY_PARTITION} add constraint ${LEGACY_PARTITION}_range check (created_at < ${end})`);
    await run(`alter table request_logs attach partition ${LEGACY_PARTITION} for values from (minvalue) to (${end})`);
    await run(`alter table ${LEGACY_PARTITION} drop constraint ${LEGACY_PARTITION}_range`);
    firstDay = end;
  }
  for (let day = firstDay; day <= today + PARTITION_DAYS_AHEAD * DAY_MS; day += DAY_MS) await addDayPartition(run, day, false);
  await run(`create table ${DEFAULT_PARTITION} partition of request_logs default`);
}

/** Back to one table: every row copied into it (the partitions dropped), its key `id` alone again. */
export async function down(db: Kysely<unknown>): Promise<void> {
  if (migrationDialect(db) !== 'postgres') return;
  const run = runOn(db);
  await run('create table request_logs_unpartitioned (like request_logs including defaults)');
  await run('insert into request_logs_unpartitioned select * from request_logs');
  await run('drop table request_logs');
  await run('alter table request_logs_unpartitioned rename to request_logs');
  await run('alter table request_logs add constraint request_logs_pkey primary key (id)');
  for (const statement of REQUEST_LOG_INDEXES) await run(statement);
}

function runOn(db: Kysely<unknown>): RunSql {
  return async (text, parameters = []) => (await db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(text, [...parameters]))).rows;
}
