import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type SqliteDatabase from 'better-sqlite3';
import type pg from 'pg';
import type { Database } from './open-database.js';
import {
  addDayPartition,
  DAY_MS,
  dayPartitionName,
  DEFAULT_PARTITION,
  listPartitions,
  missingDays,
  PARTITION_DAYS_AHEAD,
  utcDayStart,
  type Partition,
  type RunSql,
} from './request-log-partitions.js';
import { idAt } from './request-log-search.js';
import { SQLITE_LOCK_WAIT_MS, whenUnlocked } from './sqlite-dialect.js';

/** What one retention pass did (docs/request-log-retention.md). */
export interface RetentionPass {
  /** Why nothing was looked at: `forever` (nothing to remove), or `busy`: another process runs a pass now (PostgreSQL). */
  skipped: 'forever' | 'busy' | null;
  /** Rows that started before this were to go (epoch ms); null when skipped or `forever`. */
  cutoff: number | null;
  /** Rows deleted one batch at a time (SQLite; on PostgreSQL the legacy and DEFAULT partitions). */
  rowsDeleted: number;
  /** PostgreSQL: whole partitions dropped, with the rows each held. */
  partitionsDropped: Array<{ name: string; rows: number }>;
  /** PostgreSQL: partitions made for today and the coming days. */
  partitionsCreated: string[];
  /** PostgreSQL: partitions left for the next pass, and why: their lock was not had within the lock timeout, or their statement failed. */
  partitionsDeferred: Array<{ name: string; reason: string }>;
  /** SQLite: pages given back to the file system by the incremental vacuum. */
  pagesFreed: number;
  /** False when the pass was stopped (shutdown) before it was done. */
  complete: boolean;
  durationMs: number;
}

/** Rows a pass removed, dropped partitions' and deleted ones together. */
export function rowsRemoved(pass: RetentionPass): number {
  return pass.rowsDeleted + pass.partitionsDropped.reduce((sum, partition) => sum + partition.rows, 0);
}

export interface RequestLogRetention {
  /** Milliseconds a row is kept; null for `forever`. */
  readonly retentionMs: number | null;
  /**
   * PostgreSQL: the partitions of today and the next days that are missing, made (the same as a
   * pass does first; also when the retention is `forever`). SQLite: nothing.
   */
  maintain(): Promise<RetentionPass>;
  /** One pass: maintenance, then every row that started before now − retention removed; `signal` stops it between batches. */
  prune(signal?: AbortSignal): Promise<RetentionPass>;
}

export interface RetentionOptions {
  /** Null: `forever`. */
  retentionMs: number | null;
  now?: () => number;
  /** SQLite: the first batch's rows; later batches are sized to take about `batchTargetMs`. PostgreSQL: every batch's rows. */
  batchRows?: number;
  /** SQLite: how long one batch (a delete, a vacuum step) may hold the write lock and the event loop, about. */
  batchTargetMs?: number;
  /** PostgreSQL: longest a partition's creation or drop waits for its lock before it is left for the next pass. */
  lockTimeoutMs?: number;
  /** SQLite: told after each batch (a delete, a vacuum step) with its size and how long it held the event loop: what the bench reports. */
  onBatch?: (step: 'delete' | 'vacuum', size: number, ms: number) => void;
}

export const DEFAULT_BATCH_TARGET_MS = 10;
const SQLITE_FIRST_BATCH_ROWS = 500;
const SQLITE_MIN_BATCH_ROWS = 20;
const SQLITE_MAX_BATCH_ROWS = 20_000;
const SQLITE_FIRST_VACUUM_PAGES = 128;
const SQLITE_MAX_VACUUM_PAGES = 8_192;
const POSTGRES_BATCH_ROWS = 5_000;
const POSTGRES_LOCK_TIMEOUT_MS = 1_000;
/** Long statements of a pass (counting a day's rows before its partition is dropped) are not held to the request path's statement timeout. */
const POSTGRES_PASS_STATEMENT_TIMEOUT_MS = 300_000;
/**
 * The advisory lock a pass holds (`pg_try_advisory_lock(class, hashtext(current_schema()))`): one
 * pass at a time per schema, whichever process runs it; the others skip theirs.
 */
export const RETENTION_LOCK_CLASS = 0x5359_0001;

/** The request log's retention on the database `database` is (SQLite or PostgreSQL). */
export function requestLogRetention(database: Database, options: RetentionOptions): RequestLogRetention {
  if (database.sqlite !== null) return new SqliteRetention(database.sqlite, options);
  if (database.postgres !== null) return new PostgresRetention(database.postgres, options);
  throw new Error('request log retention: the database is neither SQLite nor PostgreSQL');
}

function emptyPass(started: number): RetentionPass {
  return {
    skipped: null,
    cutoff: null,
    rowsDeleted: 0,
    partitionsDropped: [],
    partitionsCreated: [],
    partitionsDeferred: [],
    pagesFreed: 0,
    complete: true,
    durationMs: performance.now() - started,
  };
}

/** Read afresh at each call (a pass is stopped while it awaits). */
function stopped(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

/** The next batch's size, for one to take about `targetMs` at the pace of the last. */
function resized(size: number, tookMs: number, targetMs: number, min: number, max: number): number {
  const next = tookMs <= 0 ? size * 2 : Math.round((size * targetMs) / tookMs);
  return Math.min(max, Math.max(min, Math.min(next, size * 2)));
}

/**
 * SQLite: rows deleted in batches, each its own short IMMEDIATE transaction on the event loop
 * (better-sqlite3 is synchronous), the loop let go between them, each sized to hold the write lock
 * for about `batchTargetMs`; then the freed pages given back with `incremental_vacuum`, in steps
 * as short, when the database has `auto_vacuum = INCREMENTAL`. Rows are found by the primary key
 * (`id < the first id of the cutoff's millisecond`: ids begin with their time), not a `created_at`
 * index, which would cost every insert a B-tree more.
 */
class SqliteRetention implements RequestLogRetention {
  readonly retentionMs: number | null;
  private readonly now: () => number;
  private readonly targetMs: number;
  private batchRows: number;
  private vacuumPages = SQLITE_FIRST_VACUUM_PAGES;
  private readonly onBatch: NonNullable<RetentionOptions['onBatch']>;

  constructor(
    private readonly sqlite: SqliteDatabase.Database,
    options: RetentionOptions,
  ) {
    this.retentionMs = options.retentionMs;
    this.now = options.now ?? Date.now;
    this.targetMs = options.batchTargetMs ?? DEFAULT_BATCH_TARGET_MS;
    this.batchRows = options.batchRows ?? SQLITE_FIRST_BATCH_ROWS;
    this.onBatch = options.onBatch ?? (() => undefined);
  }

  async maintain(): Promise<RetentionPass> {
    return emptyPass(performance.now());
  }

  async prune(signal?: AbortSignal): Promise<RetentionPass> {
    const started = performance.now();
    const pass = emptyPass(started);
    if (this.retentionMs === null) return { ...pass, skipped: 'forever' };
    const cutoff = this.now() - this.retentionMs;
    pass.cutoff = cutoff;
    const remove = this.sqlite.prepare('delete from request_logs where rowid in (select rowid from request_logs where id < ? and created_at < ? limit ?)');
    const batch = this.sqlite.transaction((limit: number) => remove.run(idAt(cutoff), cutoff, limit).changes);
    for (;;) {
      if (stopped(signal)) return { ...pass, complete: false, durationMs: performance.now() - started };
      const limit = this.batchRows;
      const batchStarted = performance.now();
      const deleted = await whenUnlocked(() => batch.immediate(limit));
      const tookMs = performance.now() - batchStarted;
      this.onBatch('delete', deleted, tookMs);
      this.batchRows = resized(limit, tookMs, this.targetMs, SQLITE_MIN_BATCH_ROWS, SQLITE_MAX_BATCH_ROWS);
      pass.rowsDeleted += deleted;
      if (deleted < limit) break;
      await nextTurn();
    }
    pass.pagesFreed = await this.vacuum(signal);
    if (stopped(signal)) pass.complete = false;
    return { ...pass, durationMs: performance.now() - started };
  }

  /** Gives the free pages back, a step at a time; nothing without `auto_vacuum = INCREMENTAL` (docs/request-log-retention.md). */
  private async vacuum(signal?: AbortSignal): Promise<number> {
    if (this.sqlite.pragma('auto_vacuum', { simple: true }) !== 2) return 0;
    let freed = 0;
    for (;;) {
      if (stopped(signal)) return freed;
      const free = Number(this.sqlite.pragma('freelist_count', { simple: true }));
      if (free === 0) return freed;
      const pages = Math.min(free, this.vacuumPages);
      const stepStarted = performance.now();
      await whenUnlocked(() => this.sqlite.exec(`pragma incremental_vacuum(${pages})`));
      const tookMs = performance.now() - stepStarted;
      this.onBatch('vacuum', pages, tookMs);
      this.vacuumPages = resized(pages, tookMs, this.targetMs, 16, SQLITE_MAX_VACUUM_PAGES);
      const left = Number(this.sqlite.pragma('freelist_count', { simple: true }));
      freed += free - left;
      if (left >= free) return freed;
      await nextTurn();
    }
  }
}

/**
 * PostgreSQL: whole days are dropped. A pass runs on a connection of its own holding an advisory
 * lock, so one process at a time maintains and prunes (every replica runs passes; the others
 * skip theirs). It makes the partitions of today and the next `PARTITION_DAYS_AHEAD` days, drops
 * every partition wholly older than the cutoff, and deletes in batches the expired rows of the
 * legacy partition (the table before partitioning, until all of it has expired and it is dropped)
 * and of the DEFAULT partition. Creating and dropping a partition each wait at most
 * `lockTimeoutMs` for their lock (a drop needs the table's ACCESS EXCLUSIVE lock, which queues
 * every query of the log behind it while it waits), else are left for the next pass.
 */
class PostgresRetention implements RequestLogRetention {
  readonly retentionMs: number | null;
  private readonly now: () => number;
  private readonly batchRows: number;
  private readonly lockTimeoutMs: number;

  constructor(
    private readonly postgres: NonNullable<Database['postgres']>,
    options: RetentionOptions,
  ) {
    this.retentionMs = options.retentionMs;
    this.now = options.now ?? Date.now;
    this.batchRows = options.batchRows ?? POSTGRES_BATCH_ROWS;
    this.lockTimeoutMs = options.lockTimeoutMs ?? POSTGRES_LOCK_TIMEOUT_MS;
  }

  maintain(): Promise<RetentionPass> {
    return this.locked(async (run, pass) => {
      await this.makePartitions(run, pass);
    });
  }

  prune(signal?: AbortSignal): Promise<RetentionPass> {
    return this.locked(async (run, pass) => {
      await this.makePartitions(run, pass);
      if (this.retentionMs === null) {
        pass.skipped = 'forever';
        return;
      }
      const cutoff = this.now() - this.retentionMs;
      pass.cutoff = cutoff;
      const partitions = await listPartitions(run);
      for (const partition of partitions) {
        if (stopped(signal)) break;
        if (partition.isDefault || partition.to === null || partition.to > cutoff) continue;
        await this.dropPartition(run, partition, pass);
      }
      // The partitions that may hold expired rows without having wholly expired: the legacy one
      // (its range starts at MINVALUE and is not a day) and the DEFAULT one.
      for (const partition of partitions) {
        if (stopped(signal)) break;
        const partlyExpired = partition.isDefault || (partition.from === null && partition.to !== null && partition.to > cutoff);
        if (partlyExpired) pass.rowsDeleted += await this.deleteExpired(run, partition, cutoff, signal);
      }
      if (stopped(signal)) pass.complete = false;
    });
  }

  /** Runs `work` holding the retention lock on a connection of its own; a pass another process holds is skipped (`busy`). */
  private async locked(work: (run: RunSql, pass: RetentionPass) => Promise<void>): Promise<RetentionPass> {
    const started = performance.now();
    const pass = emptyPass(started);
    const { driver, config } = this.postgres;
    const client = new driver.Client({
      ...config,
      statement_timeout: POSTGRES_PASS_STATEMENT_TIMEOUT_MS,
      query_timeout: POSTGRES_PASS_STATEMENT_TIMEOUT_MS + 1_000,
    } as pg.ClientConfig);
    client.on('error', () => undefined);
    await client.connect();
    const run: RunSql = async (text, parameters = []) => (await client.query<Record<string, unknown>>(text, [...parameters])).rows;
    try {
      const [row] = await run('select pg_try_advisory_lock($1, hashtext(current_schema())) as locked', [RETENTION_LOCK_CLASS]);
      if (row?.['locked'] !== true) return { ...pass, skipped: 'busy', durationMs: performance.now() - started };
      try {
        await work(run, pass);
      } finally {
        await run('select pg_advisory_unlock($1, hashtext(current_schema()))', [RETENTION_LOCK_CLASS]);
      }
    } finally {
      await client.end().catch(() => undefined);
    }
    return { ...pass, durationMs: performance.now() - started };
  }

  private async makePartitions(run: RunSql, pass: RetentionPass): Promise<void> {
    const partitions = await listPartitions(run);
    // Not partitioned (not migrated): nothing to make.
    if (partitions.length === 0) return;
    const today = utcDayStart(this.now());
    const hasDefault = partitions.some((partition) => partition.isDefault);
    for (const day of missingDays(partitions, today, today + PARTITION_DAYS_AHEAD * DAY_MS)) {
      const failure = await this.inTransaction(run, async () => {
        await addDayPartition(run, day, hasDefault);
      });
      if (failure === null) pass.partitionsCreated.push(dayPartitionName(day));
      else pass.partitionsDeferred.push({ name: dayPartitionName(day), reason: failure });
    }
  }

  private async dropPartition(run: RunSql, partition: Partition, pass: RetentionPass): Promise<void> {
    const [counted] = await run(`select count(*) as rows from ${partition.name}`);
    const failure = await this.inTransaction(run, async () => {
      await run(`drop table ${partition.name}`);
    });
    if (failure === null) pass.partitionsDropped.push({ name: partition.name, rows: Number(counted?.['rows'] ?? 0) });
    else pass.partitionsDeferred.push({ name: partition.name, reason: failure });
  }

  /** The rows of `partition` that started before `cutoff`, deleted `batchRows` at a time (each its own statement). */
  private async deleteExpired(run: RunSql, partition: Partition, cutoff: number, signal?: AbortSignal): Promise<number> {
    // Found through the (id, created_at) key in the legacy partition; the DEFAULT one is small, read whole.
    const condition = partition.name === DEFAULT_PARTITION ? 'created_at < $1' : 'id < $3 and created_at < $1';
    const statement = `delete from ${partition.name} where ctid = any (array (select ctid from ${partition.name} where ${condition} limit $2))`;
    let deleted = 0;
    for (;;) {
      if (stopped(signal)) return deleted;
      const parameters = partition.name === DEFAULT_PARTITION ? [cutoff, this.batchRows] : [cutoff, this.batchRows, idAt(cutoff)];
      const [row] = await run(`with gone as (${statement} returning 1) select count(*) as count from gone`, parameters);
      const count = Number(row?.['count'] ?? 0);
      deleted += count;
      if (count < this.batchRows) return deleted;
      await nextTurn();
    }
  }

  /** `work` in a transaction that waits at most `lockTimeoutMs` for a lock; null when done, else why it failed (rolled back). */
  private async inTransaction(run: RunSql, work: () => Promise<void>): Promise<string | null> {
    await run('begin');
    try {
      await run(`set local lock_timeout = ${Math.max(1, Math.trunc(this.lockTimeoutMs))}`);
      await work();
      await run('commit');
      return null;
    } catch (error) {
      await run('rollback').catch(() => undefined);
      return error instanceof Error ? error.message : String(error);
    }
  }
}

export interface RetentionScheduleOptions {
  /** PostgreSQL's maintenance after the start (partitions for the coming days): soon, off the start's path. */
  maintainAfterMs: number;
  /** The first pass after the start. */
  firstPassAfterMs: number;
  /** Then one pass every this long (counted from the end of the last). */
  intervalMs: number;
  onPass(pass: RetentionPass, kind: 'maintenance' | 'pass'): void;
  onError(error: unknown, kind: 'maintenance' | 'pass'): void;
}

export interface RetentionSchedule {
  /** Stops the timers; a pass under way stops at its next batch, and this resolves once it has. */
  stop(): Promise<void>;
}

/** Passes on timers (unref'd: they never keep a process alive), never two at once. */
export function scheduleRetention(retention: RequestLogRetention, options: RetentionScheduleOptions): RetentionSchedule {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> = Promise.resolve();
  const at = (delayMs: number, kind: 'maintenance' | 'pass', next: () => void) => {
    timer = setTimeout(() => {
      timer = null;
      running = (kind === 'pass' ? retention.prune(controller.signal) : retention.maintain()).then(
        (pass) => options.onPass(pass, kind),
        (error: unknown) => options.onError(error, kind),
      );
      void running.then(() => {
        if (!controller.signal.aborted) next();
      });
    }, delayMs);
    timer.unref();
  };
  const passes = () => at(options.intervalMs, 'pass', passes);
  at(options.maintainAfterMs, 'maintenance', () => at(Math.max(0, options.firstPassAfterMs - options.maintainAfterMs), 'pass', passes));
  return {
    async stop() {
      controller.abort();
      if (timer !== null) clearTimeout(timer);
      await running;
    },
  };
}

/**
 * SQLite: turns on `auto_vacuum = INCREMENTAL` and rebuilds the file (`VACUUM`), which it needs to
 * take effect on a database made before (docs/request-log-retention.md); afterwards every pass
 * gives its free pages back. It holds the write lock for as long as it runs (minutes for gigabytes)
 * and needs free disk space as large as the database: `switchyard requests prune --vacuum` runs
 * it, for an operator to choose when. Waits up to `SQLITE_LOCK_WAIT_MS` for another writer.
 */
export function vacuumSqlite(database: Database): { bytesBefore: number; bytesAfter: number; durationMs: number } {
  const sqlite = database.sqlite;
  if (sqlite === null) throw new Error('VACUUM is for SQLite');
  const size = () => Number(sqlite.pragma('page_count', { simple: true })) * Number(sqlite.pragma('page_size', { simple: true }));
  const bytesBefore = size();
  const started = performance.now();
  sqlite.pragma(`busy_timeout = ${SQLITE_LOCK_WAIT_MS}`);
  try {
    sqlite.pragma('auto_vacuum = INCREMENTAL');
    sqlite.exec('vacuum');
  } finally {
    sqlite.pragma('busy_timeout = 0');
  }
  return { bytesBefore, bytesAfter: size(), durationMs: performance.now() - started };
}
