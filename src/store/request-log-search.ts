import { sql, type Expression, type ExpressionBuilder, type Kysely, type SqlBool } from 'kysely';
import type { DatabaseSchema } from './database-schema.js';
import { fromRow, type StoredRequestLogEntry } from './request-log-store.js';
import { HOUR_MS } from './request-usage-rollup.js';
import { DIMENSION_COLUMNS, planUsageRead, type DimensionColumn, type UsageDimension } from './request-usage-summary.js';

const DAY_MS = 86_400_000;

/** What the admin API and the CLI filter the request log by; every field narrows the answer. */
export interface RequestSearchFilter {
  sessionId?: string;
  tokenId?: string;
  team?: string;
  project?: string;
  model?: string;
  /** Inclusive bounds: `{ from: 500, to: 599 }` for every server error. */
  status?: { from: number; to: number };
  /** Epoch milliseconds, inclusive: requests that started at or after it. */
  from?: number;
  /** Epoch milliseconds, exclusive. */
  to?: number;
}

export type UsageGroup = UsageDimension;
type GroupColumn = DimensionColumn;

export interface UsageQuery {
  /** Epoch milliseconds, inclusive; `to` exclusive. */
  from: number;
  to: number;
  /** The buckets' length: 3,600,000 for hours, 86,400,000 for days (UTC: the epoch has no leap seconds). */
  bucketMs: number;
  groupBy: UsageGroup;
  filter?: Pick<RequestSearchFilter, 'tokenId' | 'team' | 'project' | 'model'>;
  /** At most this many rows (bucket × group) are read. */
  limit: number;
}

export interface UsageRow {
  /** The bucket's first millisecond (UTC hours and days are whole multiples from the epoch). */
  start: number;
  /** The group's columns: `token_id`, `team`, `model`, or `team` and `project` (a project's id is unique within its team). */
  group: Partial<Record<GroupColumn, string | null>>;
  requests: number;
  /** Requests answered with a status of 400 or more (caller errors, 429s, 499s and upstream failures alike). */
  errors: number;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  /** Null when no request of the row had a price. */
  costUsd: number | null;
}

export interface RequestLogSearch {
  /** Newest first; `before` (a request id: the last of the previous page) continues after it. */
  search(filter: RequestSearchFilter, page: { before?: string; limit: number }): Promise<StoredRequestLogEntry[]>;
  /** By the gateway's id, else the newest request the caller sent with that `X-Request-Id`. */
  find(requestId: string): Promise<StoredRequestLogEntry | null>;
  /** A session's requests oldest first; `after` (a request id) continues after it. */
  sessionTurns(sessionId: string, page: { after?: string; limit: number }): Promise<StoredRequestLogEntry[]>;
  /** Totals per UTC bucket and group, ordered by bucket then group (nulls last). */
  usage(query: UsageQuery): Promise<UsageRow[]>;
  /**
   * When each token's newest logged request started (to the hour, its start, once retention
   * removed the token's rows: the rollup keeps the hour); tokens with none are absent.
   */
  lastUsed(tokenIds: readonly string[]): Promise<Map<string, number>>;
  /**
   * What the matching requests spent: prompt + completion tokens and dollars (what quotas are
   * rebuilt from). Whole hours are read from the hourly rollup, which outlives retention.
   */
  spent(filter: RequestSearchFilter): Promise<{ tokens: number; usd: number }>;
}

/**
 * A row's time is its `created_at`; its id starts with the same millisecond (`req_` + 12 hex
 * digits; the record is made right after the id, so `created_at` is equal or a millisecond
 * later). Time bounds are also given as bounds on the primary key, a little wider, so that a
 * range is read from the key's B-tree instead of the whole table, and stays exact.
 */
const ID_SLACK_MS = 1_000;

/** The millisecond a gateway request id was made in (`req_` + 12 hex digits…); null for another id. */
function idTime(id: string): number | null {
  const match = /^req_([0-9a-f]{12})/.exec(id);
  return match === null ? null : Number.parseInt(match[1] as string, 16);
}

/** The lowest gateway request id of a millisecond: ids below it were made before it. */
export function idAt(milliseconds: number): string {
  return `req_${Math.max(0, Math.trunc(milliseconds)).toString(16).padStart(12, '0')}`;
}

type Where = ExpressionBuilder<DatabaseSchema, 'request_logs'>;
type RollupWhere = ExpressionBuilder<DatabaseSchema, 'request_usage_hourly'>;

/** What `request_usage_hourly` can answer: no filter of a column it does not group by. */
type RollupFilter = Pick<RequestSearchFilter, 'tokenId' | 'team' | 'project' | 'model'>;

function rollupConditions(where: RollupWhere, filter: RollupFilter, hours: { from: number | null; to: number | null }): Expression<SqlBool>[] {
  const list: Expression<SqlBool>[] = [];
  if (filter.tokenId !== undefined) list.push(where('token_id', '=', filter.tokenId));
  if (filter.team !== undefined) list.push(where('team', '=', filter.team));
  if (filter.project !== undefined) list.push(where('project', '=', filter.project));
  if (filter.model !== undefined) list.push(where('model', '=', filter.model));
  if (hours.from !== null) list.push(where('hour_start', '>=', hours.from));
  if (hours.to !== null) list.push(where('hour_start', '<', hours.to));
  return list;
}

/**
 * `[from, to)` (an absent bound: no bound) as the whole UTC hours inside it, which the rollup
 * answers, and the parts of an hour at either edge, which only the rows can. Quota periods (UTC
 * days and months, a total from 0) are whole hours; the usage charts' ranges start on an hour and
 * end at the current time, so only the current hour's rows are read.
 */
function splitHours(
  from: number | undefined,
  to: number | undefined,
): { hours: { from: number | null; to: number | null } | null; edges: Array<{ from?: number; to?: number }> } {
  const first = from === undefined ? null : Math.ceil(from / HOUR_MS) * HOUR_MS;
  const last = to === undefined ? null : Math.floor(to / HOUR_MS) * HOUR_MS;
  if (first !== null && last !== null && first >= last)
    return { hours: null, edges: [{ ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) }] };
  const edges: Array<{ from?: number; to?: number }> = [];
  if (from !== undefined && first !== null && from < first) edges.push({ from, to: first });
  if (to !== undefined && last !== null && last < to) edges.push({ from: last, to });
  return { hours: { from: first, to: last }, edges };
}

function conditions(where: Where, filter: RequestSearchFilter): Expression<SqlBool>[] {
  const list: Expression<SqlBool>[] = [];
  if (filter.sessionId !== undefined) list.push(where('session_id', '=', filter.sessionId));
  if (filter.tokenId !== undefined) list.push(where('token_id', '=', filter.tokenId));
  if (filter.team !== undefined) list.push(where('team', '=', filter.team));
  if (filter.project !== undefined) list.push(where('project', '=', filter.project));
  if (filter.model !== undefined) list.push(where('model', '=', filter.model));
  if (filter.status !== undefined) list.push(where('status', '>=', filter.status.from), where('status', '<=', filter.status.to));
  if (filter.from !== undefined) list.push(where('id', '>=', idAt(filter.from - ID_SLACK_MS)), where('created_at', '>=', filter.from));
  if (filter.to !== undefined) list.push(where('id', '<', idAt(filter.to + ID_SLACK_MS)), where('created_at', '<', filter.to));
  return list;
}

/**
 * The admin API's reads of the request log. Every list is a keyset page on the primary key (or
 * on an index ending with it), so a page costs the same on the first and the thousandth page and
 * on a log of any size; see docs/admin-requests.md for the indexes each filter uses.
 */
export class KyselyRequestLogSearch implements RequestLogSearch {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  async spent(filter: RequestSearchFilter): Promise<{ tokens: number; usd: number }> {
    if (filter.sessionId !== undefined || filter.status !== undefined) return this.spentInRows(filter);
    const { hours, edges } = splitHours(filter.from, filter.to);
    const parts = await Promise.all([
      ...(hours === null ? [] : [this.spentInHours(filter, hours)]),
      ...edges.map((edge) => this.spentInRows({ ...filter, ...edge })),
    ]);
    return parts.reduce((sum, part) => ({ tokens: sum.tokens + part.tokens, usd: sum.usd + part.usd }), { tokens: 0, usd: 0 });
  }

  private async spentInHours(filter: RollupFilter, hours: { from: number | null; to: number | null }): Promise<{ tokens: number; usd: number }> {
    const row = await this.db
      .selectFrom('request_usage_hourly')
      .select([
        sql<number | string | null>`sum(prompt_tokens + completion_tokens)`.as('tokens'),
        sql<number | string | null>`sum(coalesce(cost_usd, 0))`.as('usd'),
      ])
      .where((where) => where.and(rollupConditions(where, filter, hours)))
      .executeTakeFirst();
    return { tokens: Number(row?.tokens ?? 0), usd: Number(row?.usd ?? 0) };
  }

  private async spentInRows(filter: RequestSearchFilter): Promise<{ tokens: number; usd: number }> {
    const row = await this.db
      .selectFrom('request_logs')
      .select([
        sql<number | string | null>`sum(coalesce(prompt_tokens, 0) + coalesce(completion_tokens, 0))`.as('tokens'),
        sql<number | string | null>`sum(coalesce(cost_usd, 0))`.as('usd'),
      ])
      .where((where) => where.and(conditions(where, filter)))
      .executeTakeFirst();
    return { tokens: Number(row?.tokens ?? 0), usd: Number(row?.usd ?? 0) };
  }

  async lastUsed(tokenIds: readonly string[]): Promise<Map<string, number>> {
    const unique = [...new Set(tokenIds)];
    const lastUsed = new Map<string, number>();
    if (unique.length === 0) return lastUsed;
    // Each token's newest hour, from the rollup: one statement, one seek per token on
    // (token_id, hour_start). Once retention removed a token's rows, that hour's start is what is known.
    const { rows: hours } = await sql<{ token_id: string; hour: number | string | null }>`
      with asked(token_id) as (values ${sql.join(unique.map((id) => sql`(${id})`))})
      select asked.token_id as token_id,
        (select max(u.hour_start) from request_usage_hourly u where u.token_id = asked.token_id) as hour
      from asked`.execute(this.db);
    const byDay = new Map<number, Array<{ tokenId: string; hour: number }>>();
    for (const row of hours) {
      if (row.hour === null) continue;
      const hour = Number(row.hour);
      lastUsed.set(row.token_id, hour);
      const day = Math.floor(hour / DAY_MS) * DAY_MS;
      byDay.set(day, [...(byDay.get(day) ?? []), { tokenId: row.token_id, hour }]);
    }
    // Then each token's newest row of that hour, one seek on (token_id, id): a statement per UTC
    // day of those hours, bounded by it, so that PostgreSQL plans it over that day's partition
    // alone (a correlated bound is pruned only as it runs, every partition planned and opened for
    // each token: 0.7 ms a token over ~100 partitions, measured).
    const found = await Promise.all(
      [...byDay].map(async ([day, tokens]) => {
        // The hour's ids too (ids begin with their millisecond): a range of (token_id, id) read from its end.
        const values = tokens.map(
          ({ tokenId, hour }) => sql`(${tokenId}, cast(${hour} as bigint), ${idAt(hour - ID_SLACK_MS)}, ${idAt(hour + HOUR_MS + ID_SLACK_MS)})`,
        );
        const { rows } = await sql<{ token_id: string; created_at: number | string | null }>`
          with asked(token_id, hour, first_id, after_id) as (values ${sql.join(values)})
          select asked.token_id as token_id,
            (select r.created_at from request_logs r
              where r.token_id = asked.token_id and r.id >= asked.first_id and r.id < asked.after_id
                and r.created_at >= asked.hour and r.created_at < asked.hour + ${sql.raw(String(HOUR_MS))}
                and r.created_at >= ${sql.raw(String(day))} and r.created_at < ${sql.raw(String(day + DAY_MS))}
              order by r.id desc limit 1) as created_at
          from asked`.execute(this.db);
        return rows;
      }),
    );
    for (const row of found.flat()) if (row.created_at !== null) lastUsed.set(row.token_id, Number(row.created_at));
    return lastUsed;
  }

  async search(filter: RequestSearchFilter, page: { before?: string; limit: number }): Promise<StoredRequestLogEntry[]> {
    const { before } = page;
    const rows = await this.db
      .selectFrom('request_logs')
      .selectAll()
      .where((where) => where.and([...conditions(where, filter), ...(before === undefined ? [] : [where('id', '<', before)])]))
      .orderBy('id', 'desc')
      .limit(page.limit)
      .execute();
    return rows.map(fromRow);
  }

  async find(requestId: string): Promise<StoredRequestLogEntry | null> {
    // The gateway's id first: a caller's id that happens to equal another request's is the lesser match.
    // A gateway id says when its request started: bounded by that, PostgreSQL reads one day's partition.
    const started = idTime(requestId);
    const own =
      (started === null
        ? undefined
        : await this.db
            .selectFrom('request_logs')
            .selectAll()
            .where('id', '=', requestId)
            .where('created_at', '>=', started)
            .where('created_at', '<=', started + ID_SLACK_MS)
            .executeTakeFirst()) ?? (await this.db.selectFrom('request_logs').selectAll().where('id', '=', requestId).executeTakeFirst());
    if (own !== undefined) return fromRow(own);
    const client = await this.db
      .selectFrom('request_logs')
      .selectAll()
      .where('client_request_id', '=', requestId)
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    return client === undefined ? null : fromRow(client);
  }

  async sessionTurns(sessionId: string, page: { after?: string; limit: number }): Promise<StoredRequestLogEntry[]> {
    const { after } = page;
    let query = this.db.selectFrom('request_logs').selectAll().where('session_id', '=', sessionId);
    if (after !== undefined) query = query.where('id', '>', after);
    const rows = await query.orderBy('id', 'asc').limit(page.limit).execute();
    return rows.map(fromRow);
  }

  async usage(query: UsageQuery): Promise<UsageRow[]> {
    // A literal, not a parameter: PostgreSQL must see the same expression in select and group by.
    if (!Number.isSafeInteger(query.bucketMs) || query.bucketMs < 1) throw new Error(`bucket length ${query.bucketMs}: expected a positive integer`);
    const columns = DIMENSION_COLUMNS[query.groupBy];
    const filter = query.filter ?? {};
    // Buckets of whole hours are sums of whole hours (and of the rows of an edge's part of an hour).
    const { hours, edges } = query.bucketMs % HOUR_MS === 0 ? splitHours(query.from, query.to) : { hours: null, edges: [{ from: query.from, to: query.to }] };
    const parts = await Promise.all([
      ...(hours === null || hours.from === null || hours.to === null
        ? []
        : [
            summaryAnswers(query.groupBy, filter)
              ? this.usageInSummary(query, { from: hours.from, to: hours.to })
              : this.usageInRollup(query, columns, (where) => hourRange(where, hours.from, hours.to)),
          ]),
      ...edges.map((edge) => this.usageInRows(query, columns, edge)),
    ]);
    // A bucket's parts (days, hours, the rollup's marked hours, an edge's rows) added together.
    const merged = mergeUsage(parts.flat(), columns);
    // Sorted here: the dialects disagree on where nulls go.
    return merged.sort((a, b) => a.start - b.start || compareGroups(a.group, b.group, columns)).slice(0, query.limit);
  }

  /**
   * Whole hours from the usage summary (docs/request-usage-summary.md): current day and hour
   * summaries, and the rollup for the hours marked since their summary was made.
   */
  private async usageInSummary(query: UsageQuery, hours: { from: number; to: number }): Promise<UsageRow[]> {
    const columns = DIMENSION_COLUMNS[query.groupBy];
    const marks = await this.db
      .selectFrom('request_usage_pending')
      .select('hour_start')
      .where('hour_start', '>=', hours.from)
      .where('hour_start', '<', hours.to)
      .execute();
    const marked = new Set(marks.map((mark) => Number(mark.hour_start)));
    const plan = planUsageRead(hours.from, hours.to, query.bucketMs, marked);
    const parts = await Promise.all([
      ...chunks(plan.days, RANGES_PER_READ).map((ranges) => this.usageInSummaryPeriods(query, DAY_MS, ranges)),
      ...chunks(plan.hours, RANGES_PER_READ).map((ranges) => this.usageInSummaryPeriods(query, HOUR_MS, ranges)),
      ...chunks(plan.marked, RANGES_PER_READ).map((list) => this.usageInRollup(query, columns, (where) => [where('hour_start', 'in', list)])),
    ]);
    return parts.flat();
  }

  private async usageInSummaryPeriods(query: UsageQuery, periodMs: number, ranges: ReadonlyArray<{ from: number; to: number }>): Promise<UsageRow[]> {
    const columns = DIMENSION_COLUMNS[query.groupBy];
    const filter = query.filter ?? {};
    const size = sql.raw(String(query.bucketMs));
    const start = sql<number>`(period_start / ${size}) * ${size}`;
    const rows = await this.db
      .selectFrom('request_usage_summary')
      .select([start.as('start'), ...columns, ...SUMS])
      .where((where) =>
        where.and([
          where('period_ms', '=', periodMs),
          where('dimension', '=', query.groupBy),
          where.or(ranges.map((range) => where.and([where('period_start', '>=', range.from), where('period_start', '<', range.to)]))),
          ...(filter.tokenId === undefined ? [] : [where('token_id', '=', filter.tokenId)]),
          ...(filter.team === undefined ? [] : [where('team', '=', filter.team)]),
          ...(filter.project === undefined ? [] : [where('project', '=', filter.project)]),
          ...(filter.model === undefined ? [] : [where('model', '=', filter.model)]),
        ]),
      )
      .groupBy([start, ...columns])
      .limit(query.limit)
      .execute();
    return rows.map((row) => usageRow(row, columns));
  }

  private async usageInRollup(query: UsageQuery, columns: readonly GroupColumn[], hours: (where: RollupWhere) => Expression<SqlBool>[]): Promise<UsageRow[]> {
    const size = sql.raw(String(query.bucketMs));
    const start = sql<number>`(hour_start / ${size}) * ${size}`;
    const rows = await this.db
      .selectFrom('request_usage_hourly')
      .select([start.as('start'), ...columns, ...SUMS])
      .where((where) => where.and([...rollupConditions(where, query.filter ?? {}, { from: null, to: null }), ...hours(where)]))
      .groupBy([start, ...columns])
      .limit(query.limit)
      .execute();
    return rows.map((row) => usageRow(row, columns));
  }

  private async usageInRows(query: UsageQuery, columns: readonly GroupColumn[], range: { from?: number; to?: number }): Promise<UsageRow[]> {
    const size = sql.raw(String(query.bucketMs));
    // Integer division on both dialects: created_at is a bigint.
    const start = sql<number>`(created_at / ${size}) * ${size}`;
    const rows = await this.db
      .selectFrom('request_logs')
      .select([
        start.as('start'),
        ...columns,
        (builder) => builder.fn.countAll<number>().as('requests'),
        sql<number>`sum(case when status >= 400 then 1 else 0 end)`.as('errors'),
        sql<number>`coalesce(sum(prompt_tokens), 0)`.as('prompt_tokens'),
        sql<number>`coalesce(sum(completion_tokens), 0)`.as('completion_tokens'),
        sql<number>`coalesce(sum(cached_tokens), 0)`.as('cached_tokens'),
        sql<number | null>`sum(cost_usd)`.as('cost_usd'),
      ])
      .where((where) => where.and(conditions(where, { ...query.filter, ...range })))
      .groupBy([start, ...columns])
      .limit(query.limit)
      .execute();
    return rows.map((row) => usageRow(row, columns));
  }
}

/** The sums a usage row reads from the rollup or the summary (their columns are named alike). */
const SUMS = [
  sql<number>`sum(requests)`.as('requests'),
  sql<number>`sum(errors)`.as('errors'),
  sql<number>`sum(prompt_tokens)`.as('prompt_tokens'),
  sql<number>`sum(completion_tokens)`.as('completion_tokens'),
  sql<number>`sum(cached_tokens)`.as('cached_tokens'),
  sql<number | null>`sum(cost_usd)`.as('cost_usd'),
] as const;

/** Ranges or hours in one statement at most: a statement's parameters are bounded (SQLite: 32,766). */
const RANGES_PER_READ = 500;

function chunks<T>(list: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let index = 0; index < list.length; index += size) out.push(list.slice(index, index + size));
  return out;
}

function hourRange(where: RollupWhere, from: number | null, to: number | null): Expression<SqlBool>[] {
  return [...(from === null ? [] : [where('hour_start', '>=', from)]), ...(to === null ? [] : [where('hour_start', '<', to)])];
}

/** The summary of a dimension knows only its own columns: a filter of another is read from the rollup. */
function summaryAnswers(group: UsageGroup, filter: RollupFilter): boolean {
  const columns: readonly GroupColumn[] = DIMENSION_COLUMNS[group];
  return (
    (filter.tokenId === undefined || columns.includes('token_id')) &&
    (filter.team === undefined || columns.includes('team')) &&
    (filter.project === undefined || columns.includes('project')) &&
    (filter.model === undefined || columns.includes('model'))
  );
}

type UsageSums = {
  start: number;
  requests: number;
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  cost_usd: number | null;
};

function usageRow(row: UsageSums & Partial<Record<GroupColumn, string | null>>, columns: readonly GroupColumn[]): UsageRow {
  return {
    start: Number(row.start),
    group: Object.fromEntries(columns.map((column) => [column, row[column] ?? null])),
    requests: Number(row.requests),
    errors: Number(row.errors),
    promptTokens: Number(row.prompt_tokens),
    completionTokens: Number(row.completion_tokens),
    cachedTokens: Number(row.cached_tokens),
    costUsd: row.cost_usd === null ? null : Number(row.cost_usd),
  };
}

/** Rows of the same bucket and group (the rollup's hours and an edge's rows in one bucket) added together. */
function mergeUsage(rows: readonly UsageRow[], columns: readonly GroupColumn[]): UsageRow[] {
  const merged = new Map<string, UsageRow>();
  for (const row of rows) {
    const key = JSON.stringify([row.start, ...columns.map((column) => row.group[column] ?? null)]);
    const seen = merged.get(key);
    if (seen === undefined) {
      merged.set(key, { ...row });
      continue;
    }
    seen.requests += row.requests;
    seen.errors += row.errors;
    seen.promptTokens += row.promptTokens;
    seen.completionTokens += row.completionTokens;
    seen.cachedTokens += row.cachedTokens;
    seen.costUsd = seen.costUsd === null ? row.costUsd : row.costUsd === null ? seen.costUsd : seen.costUsd + row.costUsd;
  }
  return [...merged.values()];
}

function compareGroups(a: UsageRow['group'], b: UsageRow['group'], columns: readonly GroupColumn[]): number {
  for (const column of columns) {
    const left = a[column] ?? null;
    const right = b[column] ?? null;
    if (left === right) continue;
    if (left === null) return 1;
    if (right === null) return -1;
    return left < right ? -1 : 1;
  }
  return 0;
}
