import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type SqliteDatabase from 'better-sqlite3';
import { CompiledQuery, type Kysely } from 'kysely';
import type { DatabaseSchema } from './database-schema.js';
import type { Database } from './open-database.js';
import { DAY_MS } from './request-log-partitions.js';
import { groupKeySql, HOUR_MS } from './request-usage-rollup.js';
import { whenUnlocked } from './sqlite-dialect.js';

/**
 * The usage summary (docs/request-usage-summary.md): `request_usage_hourly` added up per hour and
 * per UTC day along one dimension at a time (token, team, project, model), so that a chart of
 * every team over 30 days reads a few thousand rows, not the rollup's millions.
 *
 * It is made off the request path, from the rollup, for the hours the request log's batches
 * marked in `request_usage_pending` (in the same transaction as their rows): an hour's rows are
 * summed again once the hour is over, and its day's rows kept the sum of its hours'. A marked hour
 * is read from the rollup instead (and its day from its hours), so a read is exact whenever it runs.
 */

export type UsageDimension = 'token' | 'team' | 'project' | 'model';
export type DimensionColumn = 'token_id' | 'team' | 'project' | 'model';

/** A dimension's columns: a project's id is unique within its team. */
export const DIMENSION_COLUMNS: Readonly<Record<UsageDimension, readonly DimensionColumn[]>> = {
  token: ['token_id'],
  team: ['team'],
  project: ['team', 'project'],
  model: ['model'],
};

const DIMENSIONS = Object.keys(DIMENSION_COLUMNS) as UsageDimension[];
const ALL_COLUMNS: readonly DimensionColumn[] = ['token_id', 'team', 'project', 'model'];

/**
 * An hour is first summed this long after it ends: the rows of requests that ended just after it
 * have landed by then (a later one marks the hour again, and it is summed again).
 */
export const SUMMARY_GRACE_MS = 60_000;

/**
 * PostgreSQL: each of a pass's transactions first takes `pg_try_advisory_xact_lock(class,
 * hashtext(current_schema()))`, so one process at a time sums a schema's periods (replicas
 * and workers all run passes; a pass that finds the lock taken stops until its next turn).
 */
export const SUMMARY_LOCK_CLASS = 0x5359_0002;

/** Marks read at once; a pass goes on until none is left that is due. */
const MARKS_PER_READ = 100;

/** The batch insert's mark of an hour its rows count in (SQLite's statement; PostgreSQL's adds `unnest`). */
export const MARK_ON_CONFLICT = 'on conflict (hour_start) do update set marks = request_usage_pending.marks + 1';

const SUMMARY_COLUMNS =
  'period_ms, dimension, period_start, group_key, token_id, team, project, model, requests, errors, prompt_tokens, completion_tokens, cached_tokens, reasoning_tokens, cost_usd';
const SUMS = 'sum(requests), sum(errors), sum(prompt_tokens), sum(completion_tokens), sum(cached_tokens), sum(reasoning_tokens), sum(cost_usd)';

/** An hour's rows of one dimension summed from the rollup's rows of that hour; the key tells a null from a value, as `usageGroupKey` does. */
function hourInsert(dimension: UsageDimension): string {
  const columns = DIMENSION_COLUMNS[dimension];
  const values = ALL_COLUMNS.map((column) => (columns.includes(column) ? column : 'null')).join(', ');
  return `insert into request_usage_summary (${SUMMARY_COLUMNS})
    select ${HOUR_MS}, '${dimension}', hour_start, ${groupKeySql(columns)}, ${values}, ${SUMS}
    from request_usage_hourly where hour_start = ? group by hour_start, ${columns.join(', ')}`;
}

const HOUR_INSERTS = Object.fromEntries(DIMENSIONS.map((dimension) => [dimension, hourInsert(dimension)])) as Record<UsageDimension, string>;

/** An hour's rows of one dimension: a range of the key (period_ms, dimension, period_start, group_key). */
const HOUR_DELETE = `delete from request_usage_summary where period_ms = ${HOUR_MS} and dimension = ? and period_start = ?`;

/**
 * An hour's rows of one dimension added to (`sign` 1) or taken from (-1) its day's. Exact for the
 * counts; a cost is a double, so exact to rounding, as the rollup's own running sums are. A day's
 * cost stays null while every hour's is (an hour's cost never goes back to null: the rollup only
 * grows). `where true`: SQLite would read the `on` of `on conflict` as a join's.
 */
function dayUpsert(sign: 1 | -1): string {
  const signed = (column: string) => (sign === 1 ? column : `-${column}`);
  return `insert into request_usage_summary (${SUMMARY_COLUMNS})
    select ${DAY_MS}, dimension, cast(? as bigint), group_key, token_id, team, project, model, ${signed('requests')}, ${signed('errors')},
      ${signed('prompt_tokens')}, ${signed('completion_tokens')}, ${signed('cached_tokens')}, ${signed('reasoning_tokens')}, ${signed('cost_usd')}
    from request_usage_summary where period_ms = ${HOUR_MS} and dimension = ? and period_start = ? and true
    on conflict (period_ms, dimension, period_start, group_key) do update set
      requests = request_usage_summary.requests + excluded.requests,
      errors = request_usage_summary.errors + excluded.errors,
      prompt_tokens = request_usage_summary.prompt_tokens + excluded.prompt_tokens,
      completion_tokens = request_usage_summary.completion_tokens + excluded.completion_tokens,
      cached_tokens = request_usage_summary.cached_tokens + excluded.cached_tokens,
      reasoning_tokens = request_usage_summary.reasoning_tokens + excluded.reasoning_tokens,
      cost_usd = coalesce(request_usage_summary.cost_usd + excluded.cost_usd, request_usage_summary.cost_usd, excluded.cost_usd)`;
}

const DAY_SUBTRACT = dayUpsert(-1);
const DAY_ADD = dayUpsert(1);

interface Statement {
  text: string;
  parameters: readonly unknown[];
}

/**
 * An hour summed again from the rollup, one dimension a transaction (each short: the event loop's,
 * on SQLite): its old rows taken from its day's, deleted, summed again, and added to its day's, so
 * a day's rows are always the sum of its hours' (a day is never summed whole: its token rows are
 * ~24 × the tokens of an hour, tens of milliseconds on SQLite). Then its mark is taken away, if no
 * batch marked it since it was read. The mark stays until the last step, so reads take the hour,
 * and its day, from the rollup and the hours until every dimension is done.
 */
function hourWork(hour: number, marks: number): Statement[][] {
  const day = Math.floor(hour / DAY_MS) * DAY_MS;
  return [
    ...DIMENSIONS.map((dimension) => [
      { text: DAY_SUBTRACT, parameters: [day, dimension, hour] },
      { text: HOUR_DELETE, parameters: [dimension, hour] },
      { text: HOUR_INSERTS[dimension], parameters: [hour] },
      { text: DAY_ADD, parameters: [day, dimension, hour] },
    ]),
    [{ text: 'delete from request_usage_pending where hour_start = ? and marks = ?', parameters: [hour, marks] }],
  ];
}

const DUE_HOURS = `select hour_start, marks from request_usage_pending where hour_start <= ? order by hour_start limit ${MARKS_PER_READ}`;

/** What one pass did. */
export interface SummaryPass {
  /** `busy`: another process holds the summary's lock (PostgreSQL); it sums what is due. */
  skipped: 'busy' | null;
  /** Hours summed (and their days kept in step). */
  hours: number;
  /** False when stopped (shutdown) before everything due was summed. */
  complete: boolean;
  durationMs: number;
}

interface Runner {
  read(text: string, parameters: readonly unknown[]): Promise<Array<{ hour_start: unknown; marks: unknown }>>;
  /** The statements in one transaction; false when another process holds the summary's lock. */
  write(statements: readonly Statement[]): Promise<boolean>;
}

export interface UsageSummarizer {
  /** Sums every marked hour that ended `SUMMARY_GRACE_MS` before `now`, oldest first, keeping its day's rows in step. */
  run(now: number, signal?: AbortSignal): Promise<SummaryPass>;
}

export function usageSummarizer(database: Database): UsageSummarizer {
  const runner = database.sqlite !== null ? sqliteRunner(database.sqlite) : postgresRunner(database.db);
  return { run: (now, signal) => summarize(runner, now, signal) };
}

async function summarize(runner: Runner, now: number, signal: AbortSignal | undefined): Promise<SummaryPass> {
  const started = performance.now();
  const pass: SummaryPass = { skipped: null, hours: 0, complete: true, durationMs: 0 };
  const finish = () => ({ ...pass, durationMs: performance.now() - started });
  for (;;) {
    const marks = await runner.read(DUE_HOURS, [now - HOUR_MS - SUMMARY_GRACE_MS]);
    for (const mark of marks) {
      for (const transaction of hourWork(Number(mark.hour_start), Number(mark.marks))) {
        if (signal?.aborted === true) return { ...finish(), complete: false };
        if (!(await runner.write(transaction))) return { ...finish(), skipped: 'busy' };
        // Each its own short transaction; requests run between them.
        await nextTurn();
      }
      pass.hours += 1;
    }
    // A mark a batch raised meanwhile is read again, and summed again.
    if (marks.length < MARKS_PER_READ) return finish();
  }
}

/** SQLite: each step one IMMEDIATE transaction, synchronous (better-sqlite3), retried while another connection writes. */
function sqliteRunner(sqlite: SqliteDatabase.Database): Runner {
  const prepared = new Map<string, SqliteDatabase.Statement>();
  const statement = (text: string) => {
    let found = prepared.get(text);
    if (found === undefined) {
      found = sqlite.prepare(text);
      prepared.set(text, found);
    }
    return found;
  };
  const transaction = sqlite.transaction((statements: readonly Statement[]) => {
    for (const { text, parameters } of statements) statement(text).run(...parameters);
  });
  return {
    async read(text, parameters) {
      return statement(text).all(...parameters) as Array<{ hour_start: unknown; marks: unknown }>;
    },
    async write(statements) {
      await whenUnlocked(() => transaction.immediate(statements));
      return true;
    },
  };
}

/** `?` placeholders as PostgreSQL's `$1`, `$2`… (none of these statements has a `?` of its own). */
function numbered(text: string): string {
  let next = 0;
  return text.replace(/\?/g, () => `$${++next}`);
}

/**
 * PostgreSQL: each step one transaction on the pool, holding the summary's advisory lock.
 * READ COMMITTED is enough: a batch that commits after the rollup was read has raised its hour's
 * `marks`, so the mark's delete (`and marks = ?`) leaves it for the next pass; one that commits
 * after the delete finds no mark and makes one.
 */
function postgresRunner(db: Kysely<DatabaseSchema>): Runner {
  const texts = new Map<string, string>();
  const compiled = (text: string, parameters: readonly unknown[]) => {
    let found = texts.get(text);
    if (found === undefined) {
      found = numbered(text);
      texts.set(text, found);
    }
    return CompiledQuery.raw(found, [...parameters]);
  };
  return {
    async read(text, parameters) {
      const result = await db.executeQuery<{ hour_start: unknown; marks: unknown }>(compiled(text, parameters));
      return result.rows;
    },
    async write(statements) {
      return db.transaction().execute(async (transaction) => {
        const locked = await transaction.executeQuery<{ locked: boolean }>(
          compiled('select pg_try_advisory_xact_lock(cast(? as integer), hashtext(current_schema())) as locked', [SUMMARY_LOCK_CLASS]),
        );
        if (locked.rows[0]?.locked !== true) return false;
        for (const { text, parameters } of statements) await transaction.executeQuery(compiled(text, parameters));
        return true;
      });
    },
  };
}

/**
 * Marks every hour the rollup has, for the summary to be made from it (the migration that adds the
 * summary; a bulk fill). `where true`: SQLite would read the `on` of `on conflict` as a join's.
 */
export const MARK_EVERY_ROLLUP_HOUR = `insert into request_usage_pending (hour_start, marks)
  select hour_start, 1 from (select distinct hour_start from request_usage_hourly) hours where true ${MARK_ON_CONFLICT}`;

/** Where a usage read over whole hours gets each part: day summaries, hour summaries, or the rollup (marked hours). */
export interface UsageReadPlan {
  /** `[from, to)` ranges of whole UTC days whose day summaries are current. */
  days: Array<{ from: number; to: number }>;
  /** `[from, to)` ranges of hours whose hour summaries are current. */
  hours: Array<{ from: number; to: number }>;
  /** Hours with a mark: read from the rollup. */
  marked: number[];
}

/**
 * Splits the whole hours `[first, last)` among the sources. Whole days with no marked hour are
 * read from their day's rows when a bucket is a whole number of days.
 */
export function planUsageRead(first: number, last: number, bucketMs: number, marked: ReadonlySet<number>): UsageReadPlan {
  const plan: UsageReadPlan = { days: [], hours: [], marked: [] };
  const push = (list: Array<{ from: number; to: number }>, from: number, to: number) => {
    const previous = list.at(-1);
    if (previous !== undefined && previous.to === from) previous.to = to;
    else list.push({ from, to });
  };
  const hoursOf = (from: number, to: number) => {
    for (let hour = from; hour < to; hour += HOUR_MS) {
      if (marked.has(hour)) plan.marked.push(hour);
      else push(plan.hours, hour, hour + HOUR_MS);
    }
  };
  let cursor = first;
  if (bucketMs % DAY_MS === 0) {
    for (let day = Math.ceil(first / DAY_MS) * DAY_MS; day + DAY_MS <= last; day += DAY_MS) {
      if (hasMarkedHour(marked, day)) continue;
      hoursOf(cursor, day);
      push(plan.days, day, day + DAY_MS);
      cursor = day + DAY_MS;
    }
  }
  hoursOf(cursor, last);
  return plan;
}

function hasMarkedHour(hours: ReadonlySet<number>, day: number): boolean {
  if (hours.size === 0) return false;
  for (let hour = day; hour < day + DAY_MS; hour += HOUR_MS) if (hours.has(hour)) return true;
  return false;
}

export interface SummaryScheduleOptions {
  /** The first pass after the start: soon, to catch up with what was marked while no gateway ran. */
  firstAfterMs: number;
  /** Then one pass every this long, counted from the end of the last. */
  intervalMs: number;
  now?: () => number;
  onPass(pass: SummaryPass): void;
  onError(error: unknown): void;
}

export interface SummarySchedule {
  /** Stops the timer; a pass under way stops before its next step, and this resolves once it has. */
  stop(): Promise<void>;
}

/** Passes on an unref'd timer (it never keeps a process alive), never two at once. */
export function scheduleUsageSummaries(summarizer: UsageSummarizer, options: SummaryScheduleOptions): SummarySchedule {
  const controller = new AbortController();
  const now = options.now ?? Date.now;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> = Promise.resolve();
  const at = (delayMs: number) => {
    timer = setTimeout(() => {
      timer = null;
      running = summarizer.run(now(), controller.signal).then(
        (pass) => options.onPass(pass),
        (error: unknown) => options.onError(error),
      );
      void running.then(() => {
        if (!controller.signal.aborted) at(options.intervalMs);
      });
    }, delayMs);
    timer.unref();
  };
  at(options.firstAfterMs);
  return {
    async stop() {
      controller.abort();
      if (timer !== null) clearTimeout(timer);
      await running;
    },
  };
}
