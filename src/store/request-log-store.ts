import type { Kysely, Selectable } from 'kysely';
import type { DatabaseSchema, RequestLogsTable } from './database-schema.js';

export type UsageSource = 'upstream' | 'estimated' | 'none';

export interface RequestLogEntry {
  id: string;
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

export class KyselyRequestLogStore implements RequestLogStore {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  async insertBatch(entries: readonly RequestLogEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await this.db.insertInto('request_logs').values(entries.map(toRow)).execute();
  }

  async query(filter: RequestLogQuery = {}): Promise<RequestLogEntry[]> {
    let query = this.db.selectFrom('request_logs').selectAll();
    if (filter.sessionId !== undefined) query = query.where('session_id', '=', filter.sessionId);
    if (filter.tokenId !== undefined) query = query.where('token_id', '=', filter.tokenId);
    const rows = await query
      .orderBy('created_at', 'desc')
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
  };
}

function fromRow(row: Selectable<RequestLogsTable>): RequestLogEntry {
  return {
    id: row.id,
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
