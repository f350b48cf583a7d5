/**
 * PostgreSQL: the request log is partitioned by range of `created_at`, one partition per UTC day
 * (`request_logs_p20261129`), plus the table as it was before partitioning (`request_logs_legacy`,
 * everything up to the end of the day it was converted) and a DEFAULT partition for a row no other
 * partition takes (maintenance late, a clock far ahead), so that an insert never fails for want of
 * a partition. Used by the migration that converts the table and by retention's maintenance.
 */

export const DAY_MS = 86_400_000;
export const LEGACY_PARTITION = 'request_logs_legacy';
export const DEFAULT_PARTITION = 'request_logs_default';
/** Days of partitions kept ready ahead of today. */
export const PARTITION_DAYS_AHEAD = 7;

/** Runs one statement with `$1`-style parameters and returns its rows. */
export type RunSql = (text: string, parameters?: readonly unknown[]) => Promise<Array<Record<string, unknown>>>;

export interface Partition {
  name: string;
  /** The DEFAULT partition: no bounds. */
  isDefault: boolean;
  /** Inclusive; null for MINVALUE (the legacy partition's start). */
  from: number | null;
  /** Exclusive; null for MAXVALUE. */
  to: number | null;
}

export function utcDayStart(time: number): number {
  return Math.floor(time / DAY_MS) * DAY_MS;
}

/** `request_logs_p20261129` for the UTC day starting at `dayStart`. */
export function dayPartitionName(dayStart: number): string {
  return `request_logs_p${new Date(dayStart).toISOString().slice(0, 10).replaceAll('-', '')}`;
}

/** The request log's partitions in the schema in effect, with their bounds, oldest first; empty when the table is not partitioned. */
export async function listPartitions(run: RunSql): Promise<Partition[]> {
  const rows = await run(
    `select c.relname as name, pg_get_expr(c.relpartbound, c.oid) as bound
     from pg_inherits i join pg_class c on c.oid = i.inhrelid
     where i.inhparent = to_regclass('request_logs')`,
  );
  // Oldest first (the legacy partition's MINVALUE before every day), the DEFAULT one last.
  const order = (partition: Partition) => (partition.isDefault ? Infinity : (partition.from ?? -Infinity));
  return rows.map((row) => parseBound(String(row['name']), String(row['bound']))).sort((a, b) => order(a) - order(b));
}

/** `FOR VALUES FROM (MINVALUE) TO ('1764547200000')`, or `DEFAULT`. */
function parseBound(name: string, bound: string): Partition {
  if (bound.trim().toUpperCase() === 'DEFAULT') return { name, isDefault: true, from: null, to: null };
  const match = /FROM \((.+?)\) TO \((.+?)\)/i.exec(bound);
  if (match === null) throw new Error(`partition ${name}: unexpected bound "${bound}"`);
  const value = (text: string): number | null => (/^(MINVALUE|MAXVALUE)$/i.test(text.trim()) ? null : Number(text.replaceAll("'", '').trim()));
  return { name, isDefault: false, from: value(match[1] as string), to: value(match[2] as string) };
}

/**
 * Adds the partition of the UTC day starting at `dayStart`. Made beside the table and then
 * attached: ATTACH takes a SHARE UPDATE EXCLUSIVE lock on `request_logs`, which inserts and reads
 * go on under, where CREATE TABLE … PARTITION OF would take an ACCESS EXCLUSIVE one. Rows of that
 * day already in the DEFAULT partition (it took them while the day had none) move into it first;
 * else the attach would fail. The caller runs this in a transaction. Returns the rows moved.
 */
export async function addDayPartition(run: RunSql, dayStart: number, hasDefault: boolean): Promise<number> {
  const name = dayPartitionName(dayStart);
  const from = dayStart;
  const to = dayStart + DAY_MS;
  await run(`create table ${name} (like request_logs including defaults)`);
  let moved = 0;
  if (hasDefault) {
    const [stray] = await run(`select exists (select 1 from ${DEFAULT_PARTITION} where created_at >= $1 and created_at < $2) as found`, [from, to]);
    if (stray?.['found'] === true) {
      await run(`lock table ${DEFAULT_PARTITION} in access exclusive mode`);
      const [row] = await run(
        `with moved as (delete from ${DEFAULT_PARTITION} where created_at >= $1 and created_at < $2 returning *)
         , copied as (insert into ${name} select * from moved returning 1)
         select count(*) as count from copied`,
        [from, to],
      );
      moved = Number(row?.['count'] ?? 0);
    }
  }
  // The new table has no rows outside its range (checked cheaply: it is empty or holds the moved rows).
  await run(`alter table request_logs attach partition ${name} for values from (${from}) to (${to})`);
  return moved;
}

/** The days from `firstDay` through `lastDay` (day starts) that no range partition covers. */
export function missingDays(partitions: readonly Partition[], firstDay: number, lastDay: number): number[] {
  const missing: number[] = [];
  for (let day = firstDay; day <= lastDay; day += DAY_MS) {
    const covered = partitions.some((partition) => !partition.isDefault && (partition.from ?? -Infinity) <= day && day < (partition.to ?? Infinity));
    if (!covered) missing.push(day);
  }
  return missing;
}

/** The indexes of the request log, as partitioned indexes on the partitioned table (every partition gets its own). */
export const REQUEST_LOG_INDEXES = [
  'create index request_logs_session_index on request_logs (session_id, id) where session_id is not null',
  'create index request_logs_token_index on request_logs (token_id, id)',
  'create index request_logs_client_request_index on request_logs (client_request_id) where client_request_id is not null',
  'create index request_logs_logged_at_index on request_logs (logged_at)',
  'create index request_logs_team_index on request_logs (team, id)',
] as const;
