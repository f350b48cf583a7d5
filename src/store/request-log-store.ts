import { sql, type Kysely, type Selectable } from 'kysely';
import type { DatabaseSchema, RequestLogsTable } from './database-schema.js';
import type { Database } from './open-database.js';
import { hourlyUsage, ROLLUP_COLUMNS, ROLLUP_ON_CONFLICT, type HourlyUsage } from './request-usage-rollup.js';
import { MARK_ON_CONFLICT } from './request-usage-summary.js';

export type UsageSource = 'upstream' | 'estimated' | 'none';

export interface RequestLogEntry {
  /** The gateway's request id: unique and time-ordered. */
  id: string;
  /** The caller's own `X-Request-Id`, when it sent a valid one (echoed on the response; may repeat). */
  clientRequestId: string | null;
  createdAt: number;
  tokenId: string | null;
  team: string | null;
  project: string | null;
  endpoint: string;
  model: string | null;
  upstream: string | null;
  /** The model's name at the upstream that answered (or was tried last): what the gateway sent it, never shown to callers. */
  upstreamModel: string | null;
  sessionId: string | null;
  status: number;
  latencyMs: number;
  ttfbMs: number | null;
  promptTokens: number | null;
  completionTokens: number | null;
  /** Of the prompt tokens, those the upstream read from its cache; null when it did not say. */
  cachedTokens: number | null;
  /** Of the prompt tokens, those the upstream wrote to its cache (priced apart); null when it did not say. */
  cacheWriteTokens: number | null;
  /** Of the completion tokens, those spent reasoning; null when the upstream did not say. */
  reasoningTokens: number | null;
  /** What the request cost by its model's configured price; null when the model has none. */
  costUsd: number | null;
  usageSource: UsageSource | null;
  errorCode: string | null;
  /** Where the session id came from (`header`, `metadata.session_id`, `metadata.sticky_key`, `inferred`). */
  sessionSource: string | null;
  /** What became of the session's binding: `new`, `kept`, `moved`, `overflow`. */
  affinity: string | null;
  /** Every upstream attempt, in order; null when the request reached no upstream. */
  attempts: readonly LoggedAttempt[] | null;
  /** The client's address: the connection's, or behind a trusted proxy the X-Forwarded-For client's; null when unknown. */
  clientAddress: string | null;
  /** The worker of `serve --workers` that served it (docs/workers.md); null when the gateway runs as one process. */
  worker: number | null;
}

/** One upstream attempt of a request. */
export interface LoggedAttempt {
  readonly credential: string;
  /** `ok`, or the error code it ended with. */
  readonly outcome: string;
  /** The upstream's HTTP status, when it answered. */
  readonly status: number | null;
  readonly ms: number;
}

/** A row as read back: with the time it was written. */
export interface StoredRequestLogEntry extends RequestLogEntry {
  /** Null only for rows of a gateway too old to record it. */
  loggedAt: number | null;
}

export interface RequestLogQuery {
  /** Matches the gateway's id or the caller's own: whichever the `X-Request-Id` header showed. */
  requestId?: string;
  sessionId?: string;
  tokenId?: string;
  /** Inclusive bounds: `{ from: 500, to: 599 }` for every server error. */
  status?: { from: number; to: number };
  limit?: number;
}

export interface RequestLogStore {
  insertBatch(entries: readonly RequestLogEntry[]): Promise<void>;
  /** Newest request first. */
  query(filter?: RequestLogQuery): Promise<StoredRequestLogEntry[]>;
  /** Rows written at or after `loggedFrom`, in the order they were written: what a tail follows. */
  writtenSince(loggedFrom: number, filter?: RequestLogQuery): Promise<StoredRequestLogEntry[]>;
  count(): Promise<number>;
}

const COLUMNS = [
  'id',
  'created_at',
  'token_id',
  'team',
  'project',
  'endpoint',
  'model',
  'upstream',
  'session_id',
  'status',
  'latency_ms',
  'ttfb_ms',
  'prompt_tokens',
  'completion_tokens',
  'usage_source',
  'error_code',
  'client_request_id',
  'logged_at',
  'session_source',
  'affinity',
  'attempts',
  'cached_tokens',
  'reasoning_tokens',
  'cost_usd',
  'client_address',
  'upstream_model',
  'worker',
  'cache_write_tokens',
] as const satisfies ReadonlyArray<keyof RequestLogsTable>;

const POSTGRES_TYPES: Record<(typeof COLUMNS)[number], string> = {
  id: 'varchar',
  created_at: 'bigint',
  token_id: 'varchar',
  team: 'varchar',
  project: 'varchar',
  endpoint: 'varchar',
  model: 'varchar',
  upstream: 'varchar',
  session_id: 'varchar',
  status: 'integer',
  latency_ms: 'double precision',
  ttfb_ms: 'double precision',
  prompt_tokens: 'integer',
  completion_tokens: 'integer',
  usage_source: 'varchar',
  error_code: 'varchar',
  client_request_id: 'varchar',
  logged_at: 'bigint',
  session_source: 'varchar',
  affinity: 'varchar',
  attempts: 'text',
  cached_tokens: 'integer',
  reasoning_tokens: 'integer',
  cost_usd: 'double precision',
  client_address: 'varchar',
  upstream_model: 'varchar',
  worker: 'integer',
  cache_write_tokens: 'integer',
};

const ROLLUP_POSTGRES_TYPES: Record<(typeof ROLLUP_COLUMNS)[number], string> = {
  hour_start: 'bigint',
  group_key: 'text',
  token_id: 'text',
  team: 'text',
  project: 'text',
  model: 'text',
  requests: 'bigint',
  errors: 'bigint',
  prompt_tokens: 'bigint',
  completion_tokens: 'bigint',
  cached_tokens: 'bigint',
  reasoning_tokens: 'bigint',
  cost_usd: 'double precision',
};

/**
 * Reads go through Kysely. Writes are the hot path of the log, so each dialect gets the cheapest
 * batch insert it has instead of a freshly compiled multi-row INSERT per batch: a cached prepared
 * statement in one transaction on SQLite, one `unnest` of column arrays on PostgreSQL.
 *
 * The same transaction adds the batch's usage to `request_usage_hourly`, summed per hour and group
 * in memory first (one upsert per group, not per row): the rollup is exact, and outlives the rows
 * retention removes (docs/request-log-retention.md); and marks each hour the batch counts in, for
 * the usage summary to be made again from the rollup (docs/request-usage-summary.md).
 */
export class KyselyRequestLogStore implements RequestLogStore {
  private readonly db: Kysely<DatabaseSchema>;
  private readonly insertRows: (entries: readonly RequestLogEntry[]) => Promise<void>;

  constructor(database: Database) {
    this.db = database.db;
    this.insertRows = database.sqlite !== null ? sqliteBatchInsert(database.sqlite) : (entries) => postgresBatchInsert(this.db, entries);
  }

  insertBatch(entries: readonly RequestLogEntry[]): Promise<void> {
    return entries.length === 0 ? Promise.resolve() : this.insertRows(entries);
  }

  async query(filter: RequestLogQuery = {}): Promise<StoredRequestLogEntry[]> {
    // Request ids are time-ordered, so the newest rows have the greatest ids.
    const rows = await this.filtered(filter)
      .orderBy('id', 'desc')
      .limit(filter.limit ?? 100)
      .execute();
    return rows.map(fromRow);
  }

  async writtenSince(loggedFrom: number, filter: RequestLogQuery = {}): Promise<StoredRequestLogEntry[]> {
    const rows = await this.filtered(filter)
      .where('logged_at', '>=', loggedFrom)
      .orderBy('logged_at', 'asc')
      .orderBy('id', 'asc')
      .limit(filter.limit ?? 1000)
      .execute();
    return rows.map(fromRow);
  }

  private filtered(filter: RequestLogQuery) {
    let query = this.db.selectFrom('request_logs').selectAll();
    const { requestId, status } = filter;
    if (requestId !== undefined) query = query.where((where) => where.or([where('id', '=', requestId), where('client_request_id', '=', requestId)]));
    if (filter.sessionId !== undefined) query = query.where('session_id', '=', filter.sessionId);
    if (filter.tokenId !== undefined) query = query.where('token_id', '=', filter.tokenId);
    if (status !== undefined) query = query.where('status', '>=', status.from).where('status', '<=', status.to);
    return query;
  }

  async count(): Promise<number> {
    const row = await this.db
      .selectFrom('request_logs')
      .select((builder) => builder.fn.countAll().as('count'))
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }
}

function sqliteBatchInsert(sqlite: NonNullable<Database['sqlite']>): (entries: readonly RequestLogEntry[]) => Promise<void> {
  const statement = sqlite.prepare(`insert into request_logs (${COLUMNS.join(', ')}) values (${COLUMNS.map(() => '?').join(', ')})`);
  const mark = sqlite.prepare(`insert into request_usage_pending (hour_start, marks) values (?, 1) ${MARK_ON_CONFLICT}`);
  const upsert = sqlite.prepare(
    `insert into request_usage_hourly (${ROLLUP_COLUMNS.join(', ')}) values (${ROLLUP_COLUMNS.map(() => '?').join(', ')}) ${ROLLUP_ON_CONFLICT}`,
  );
  // Bound straight from the entry, in COLUMNS order: no row object or array per row.
  const insertAll = sqlite.transaction((entries: readonly RequestLogEntry[], loggedAt: number) => {
    for (const entry of entries) {
      statement.run(
        entry.id,
        entry.createdAt,
        entry.tokenId,
        entry.team,
        entry.project,
        entry.endpoint,
        entry.model,
        entry.upstream,
        entry.sessionId,
        entry.status,
        entry.latencyMs,
        entry.ttfbMs,
        entry.promptTokens,
        entry.completionTokens,
        entry.usageSource,
        entry.errorCode,
        entry.clientRequestId,
        loggedAt,
        entry.sessionSource,
        entry.affinity,
        attemptsJson(entry.attempts),
        entry.cachedTokens,
        entry.reasoningTokens,
        entry.costUsd,
        entry.clientAddress ?? null,
        entry.upstreamModel,
        entry.worker,
        entry.cacheWriteTokens,
      );
    }
    const groups = hourlyUsage(entries);
    for (const hour of hoursOf(groups)) mark.run(hour);
    for (const group of groups) {
      upsert.run(
        group.hourStart,
        group.groupKey,
        group.tokenId,
        group.team,
        group.project,
        group.model,
        group.requests,
        group.errors,
        group.promptTokens,
        group.completionTokens,
        group.cachedTokens,
        group.reasoningTokens,
        group.costUsd,
      );
    }
  });
  // IMMEDIATE: the write lock is asked for once, at the start, and a locked database fails the
  // batch at once (busy_timeout is 0); the queue keeps its rows for the next flush.
  return async (entries) => {
    insertAll.immediate(entries, Date.now());
  };
}

async function postgresBatchInsert(db: Kysely<DatabaseSchema>, entries: readonly RequestLogEntry[]): Promise<void> {
  const loggedAt = Date.now();
  const rows = entries.map((entry) => toRow(entry, loggedAt));
  const arrays = COLUMNS.map((column) => sql`${rows.map((row) => row[column])}::${sql.raw(POSTGRES_TYPES[column])}[]`);
  const usage = hourlyUsage(entries);
  const groups = usage.map(rollupRow);
  const rollup = ROLLUP_COLUMNS.map((column) => sql`${groups.map((group) => group[column])}::${sql.raw(ROLLUP_POSTGRES_TYPES[column])}[]`);
  // One statement, so one transaction: the rows, their usage and the marks of their hours are
  // written together or not at all.
  await sql`with logged as (insert into request_logs (${sql.raw(COLUMNS.join(', '))}) select * from unnest(${sql.join(arrays)})),
    marked as (insert into request_usage_pending (hour_start, marks)
      select hour, 1 from unnest(${hoursOf(usage)}::bigint[]) as hour ${sql.raw(MARK_ON_CONFLICT)})
    insert into request_usage_hourly (${sql.raw(ROLLUP_COLUMNS.join(', '))}) select * from unnest(${sql.join(rollup)})
    ${sql.raw(ROLLUP_ON_CONFLICT)}`.execute(db);
}

/** The hours a batch's usage counts in, each once, in order (as every writer takes their marks' locks). */
function hoursOf(groups: readonly HourlyUsage[]): number[] {
  const hours: number[] = [];
  for (const group of groups) if (hours.at(-1) !== group.hourStart) hours.push(group.hourStart);
  return hours;
}

function rollupRow(group: HourlyUsage): Record<(typeof ROLLUP_COLUMNS)[number], string | number | null> {
  return {
    hour_start: group.hourStart,
    group_key: group.groupKey,
    token_id: group.tokenId,
    team: group.team,
    project: group.project,
    model: group.model,
    requests: group.requests,
    errors: group.errors,
    prompt_tokens: group.promptTokens,
    completion_tokens: group.completionTokens,
    cached_tokens: group.cachedTokens,
    reasoning_tokens: group.reasoningTokens,
    cost_usd: group.costUsd,
  };
}

function toRow(entry: RequestLogEntry, loggedAt: number): RequestLogsTable {
  return {
    id: entry.id,
    created_at: entry.createdAt,
    token_id: entry.tokenId,
    team: entry.team,
    project: entry.project,
    endpoint: entry.endpoint,
    model: entry.model,
    upstream: entry.upstream,
    session_id: entry.sessionId,
    status: entry.status,
    latency_ms: entry.latencyMs,
    ttfb_ms: entry.ttfbMs,
    prompt_tokens: entry.promptTokens,
    completion_tokens: entry.completionTokens,
    usage_source: entry.usageSource,
    error_code: entry.errorCode,
    client_request_id: entry.clientRequestId,
    logged_at: loggedAt,
    session_source: entry.sessionSource,
    affinity: entry.affinity,
    attempts: attemptsJson(entry.attempts),
    cached_tokens: entry.cachedTokens,
    reasoning_tokens: entry.reasoningTokens,
    cost_usd: entry.costUsd,
    client_address: entry.clientAddress ?? null,
    upstream_model: entry.upstreamModel,
    worker: entry.worker,
    cache_write_tokens: entry.cacheWriteTokens,
  };
}

function attemptsJson(attempts: readonly LoggedAttempt[] | null): string | null {
  return attempts === null ? null : JSON.stringify(attempts);
}

/** A row as stored → the entry it was written from, with its write time. */
export function fromRow(row: Selectable<RequestLogsTable>): StoredRequestLogEntry {
  return {
    id: row.id,
    clientRequestId: row.client_request_id,
    createdAt: Number(row.created_at),
    tokenId: row.token_id,
    team: row.team,
    project: row.project,
    endpoint: row.endpoint,
    model: row.model,
    upstream: row.upstream,
    upstreamModel: row.upstream_model,
    sessionId: row.session_id,
    status: row.status,
    latencyMs: Number(row.latency_ms),
    ttfbMs: row.ttfb_ms === null ? null : Number(row.ttfb_ms),
    promptTokens: row.prompt_tokens,
    completionTokens: row.completion_tokens,
    usageSource: row.usage_source as UsageSource | null,
    errorCode: row.error_code,
    sessionSource: row.session_source,
    affinity: row.affinity,
    attempts: row.attempts === null ? null : (JSON.parse(row.attempts) as LoggedAttempt[]),
    cachedTokens: row.cached_tokens,
    cacheWriteTokens: row.cache_write_tokens,
    reasoningTokens: row.reasoning_tokens,
    costUsd: row.cost_usd === null ? null : Number(row.cost_usd),
    clientAddress: row.client_address,
    worker: row.worker,
    loggedAt: row.logged_at === null ? null : Number(row.logged_at),
  };
}
