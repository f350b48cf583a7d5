import { sql, type Kysely, type Selectable } from 'kysely';
import type { DatabaseSchema, RequestLogsTable } from './database-schema.js';
import type { Database } from './open-database.js';

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
  sessionId: string | null;
  status: number;
  latencyMs: number;
  ttfbMs: number | null;
  promptTokens: number | null;
  completionTokens: number | null;
  usageSource: UsageSource | null;
  errorCode: string | null;
}

export interface RequestLogQuery {
  /** Matches the gateway's id or the caller's own: whichever the `X-Request-Id` header showed. */
  requestId?: string;
  sessionId?: string;
  tokenId?: string;
  limit?: number;
}

export interface RequestLogStore {
  insertBatch(entries: readonly RequestLogEntry[]): Promise<void>;
  /** Newest first. */
  query(filter?: RequestLogQuery): Promise<RequestLogEntry[]>;
  count(): Promise<number>;
}

const COLUMNS = [
  'id', 'created_at', 'token_id', 'team', 'project', 'endpoint', 'model', 'upstream', 'session_id',
  'status', 'latency_ms', 'ttfb_ms', 'prompt_tokens', 'completion_tokens', 'usage_source', 'error_code', 'client_request_id',
] as const satisfies ReadonlyArray<keyof RequestLogsTable>;

const POSTGRES_TYPES: Record<(typeof COLUMNS)[number], string> = {
  id: 'varchar', created_at: 'bigint', token_id: 'varchar', team: 'varchar', project: 'varchar', endpoint: 'varchar',
  model: 'varchar', upstream: 'varchar', session_id: 'varchar', status: 'integer', latency_ms: 'double precision',
  ttfb_ms: 'double precision', prompt_tokens: 'integer', completion_tokens: 'integer', usage_source: 'varchar', error_code: 'varchar',
  client_request_id: 'varchar',
};

/**
 * Reads go through Kysely. Writes are the hot path of the log, so each dialect gets the cheapest
 * batch insert it has instead of a freshly compiled multi-row INSERT per batch: a cached prepared
 * statement in one transaction on SQLite, one `unnest` of column arrays on PostgreSQL.
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

  async query(filter: RequestLogQuery = {}): Promise<RequestLogEntry[]> {
    let query = this.db.selectFrom('request_logs').selectAll();
    const { requestId } = filter;
    if (requestId !== undefined) query = query.where((where) => where.or([where('id', '=', requestId), where('client_request_id', '=', requestId)]));
    if (filter.sessionId !== undefined) query = query.where('session_id', '=', filter.sessionId);
    if (filter.tokenId !== undefined) query = query.where('token_id', '=', filter.tokenId);
    // Request ids are time-ordered, so the newest rows have the greatest ids.
    const rows = await query
      .orderBy('id', 'desc')
      .limit(filter.limit ?? 100)
      .execute();
    return rows.map(fromRow);
  }

  async count(): Promise<number> {
    const row = await this.db.selectFrom('request_logs').select((builder) => builder.fn.countAll().as('count')).executeTakeFirstOrThrow();
    return Number(row.count);
  }
}

function sqliteBatchInsert(sqlite: NonNullable<Database['sqlite']>): (entries: readonly RequestLogEntry[]) => Promise<void> {
  const statement = sqlite.prepare(`insert into request_logs (${COLUMNS.join(', ')}) values (${COLUMNS.map(() => '?').join(', ')})`);
  // Bound straight from the entry, in COLUMNS order: no row object or array per row.
  const insertAll = sqlite.transaction((entries: readonly RequestLogEntry[]) => {
    for (const entry of entries) {
      statement.run(
        entry.id, entry.createdAt, entry.tokenId, entry.team, entry.project, entry.endpoint, entry.model, entry.upstream,
        entry.sessionId, entry.status, entry.latencyMs, entry.ttfbMs, entry.promptTokens, entry.completionTokens,
        entry.usageSource, entry.errorCode, entry.clientRequestId,
      );
    }
  });
  return async (entries) => {
    insertAll(entries);
  };
}

async function postgresBatchInsert(db: Kysely<DatabaseSchema>, entries: readonly RequestLogEntry[]): Promise<void> {
  const rows = entries.map(toRow);
  const arrays = COLUMNS.map((column) => sql`${rows.map((row) => row[column])}::${sql.raw(POSTGRES_TYPES[column])}[]`);
  await sql`insert into request_logs (${sql.raw(COLUMNS.join(', '))}) select * from unnest(${sql.join(arrays)})`.execute(db);
}

function toRow(entry: RequestLogEntry): RequestLogsTable {
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
  };
}

function fromRow(row: Selectable<RequestLogsTable>): RequestLogEntry {
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
    sessionId: row.session_id,
    status: row.status,
    latencyMs: Number(row.latency_ms),
    ttfbMs: row.ttfb_ms === null ? null : Number(row.ttfb_ms),
    promptTokens: row.prompt_tokens,
    completionTokens: row.completion_tokens,
    usageSource: row.usage_source as UsageSource | null,
    errorCode: row.error_code,
  };
}
