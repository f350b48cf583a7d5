import { invalidField } from '../access/input-checks.js';
import { decodeCursor, pageSize, readPage } from '../access/list-page.js';
import { GatewayError } from '../errors/index.js';
import type { RequestLogSearch, RequestSearchFilter, StoredRequestLogEntry, UsageGroup, UsageRow } from '../store/index.js';
import { parseStatus, parseTime } from './query-values.js';
import {
  DEFAULT_PAGE_SIZE,
  DEFAULT_TURNS,
  type RequestList,
  type RequestListQuery,
  type RequestView,
  type SessionQuery,
  type SessionView,
  type UsageQueryParameters,
  type UsageRowView,
  type UsageView,
} from './request-schemas.js';

const BUCKET_MS = { hour: 3_600_000, day: 86_400_000 } as const;
/** Buckets a usage range may span: 41 days of hours, 2.7 years of days. */
export const MAX_USAGE_BUCKETS = 1_000;
/** Rows (bucket × group) a usage answer may have; past it the caller narrows the range or filters. */
export const MAX_USAGE_ROWS = 10_000;
/** A default range is this many buckets: the current one and those before it. */
const DEFAULT_USAGE_BUCKETS = 24;

/**
 * The request log as operators read it: the admin API's requests, sessions and usage routes and
 * `switchyard requests` call this. It checks what the schemas cannot (dates, statuses, cursors),
 * pages with opaque cursors, and answers in the wire format (snake_case, ISO 8601 times in UTC).
 */
export class RequestQueries {
  constructor(
    private readonly search: RequestLogSearch,
    private readonly now: () => number = Date.now,
  ) {}

  /** Newest first, `limit` at a time; `next_cursor` is null on the last page. */
  async list(query: RequestListQuery): Promise<RequestList> {
    const filter = requestFilter(query);
    const limit = pageSize({ limit: query.limit ?? DEFAULT_PAGE_SIZE });
    const before = decodeCursor(query.cursor, isRequestId);
    const page = await readPage(
      limit,
      (rows) => this.search.search(filter, { ...(before === undefined ? {} : { before }), limit: rows }),
      (last) => last.id,
    );
    return { object: 'list', data: page.data.map(requestView), next_cursor: page.nextCursor };
  }

  /** By the gateway's id, or by the caller's own `X-Request-Id` (its newest request). */
  async get(id: string): Promise<RequestView> {
    const row = await this.search.find(id);
    if (row === null) throw new GatewayError('request_not_found', `No request with id "${id}" in the request log.`, { param: 'id' });
    return requestView(row);
  }

  /** The session's requests oldest first. A session is known by its requests: none, 404. */
  async session(id: string, query: SessionQuery): Promise<SessionView> {
    const limit = pageSize({ limit: query.limit ?? DEFAULT_TURNS });
    const after = decodeCursor(query.cursor, isRequestId);
    const page = await readPage(
      limit,
      (rows) => this.search.sessionTurns(id, { ...(after === undefined ? {} : { after }), limit: rows }),
      (last) => last.id,
    );
    if (page.data.length === 0 && after === undefined)
      throw new GatewayError('session_not_found', `No request of session "${id}" in the request log.`, { param: 'id' });
    return { object: 'session', id, turns: page.data.map(requestView), next_cursor: page.nextCursor };
  }

  /** Totals per UTC hour or day and per token, team, project or model, over `[from, to)`. */
  async usage(query: UsageQueryParameters): Promise<UsageView> {
    const bucket = query.bucket ?? 'day';
    const groupBy: UsageGroup = query.group_by ?? 'team';
    const size = BUCKET_MS[bucket];
    const to = query.to === undefined ? this.now() : parseTime('to', query.to);
    const from = query.from === undefined ? Math.floor(to / size) * size - (DEFAULT_USAGE_BUCKETS - 1) * size : parseTime('from', query.from);
    if (to <= from) throw invalidField(['query', 'to'], 'Input should be after from', 'value_error');
    if ((to - from) / size > MAX_USAGE_BUCKETS) {
      throw invalidField(
        ['query', 'from'],
        `The range spans more than ${MAX_USAGE_BUCKETS} ${bucket}s: narrow it${bucket === 'hour' ? ' or use bucket=day' : ''}`,
        'value_error',
      );
    }
    // With no `to` the range runs until now, and the hour under way is read whole: from the rollup,
    // not from its rows up to this millisecond, which at a busy hour are millions (rows a replica
    // whose clock is ahead stamped after now count too). docs/request-usage-summary.md.
    const readTo = query.to === undefined ? Math.ceil(to / BUCKET_MS.hour) * BUCKET_MS.hour : to;
    const rows = await this.search.usage({ from, to: readTo, bucketMs: size, groupBy, filter: usageFilter(query), limit: MAX_USAGE_ROWS + 1 });
    if (rows.length > MAX_USAGE_ROWS) {
      throw invalidField(
        ['query', 'group_by'],
        `The answer would have more than ${MAX_USAGE_ROWS} rows (buckets × groups): narrow the range, use a larger bucket, or filter`,
        'value_error',
      );
    }
    return { object: 'usage', bucket, group_by: groupBy, from: iso(from), to: iso(to), data: rows.map(usageRowView) };
  }
}

function requestFilter(query: RequestListQuery): RequestSearchFilter {
  const filter: RequestSearchFilter = usageFilter(query);
  if (query.session_id !== undefined) filter.sessionId = query.session_id;
  if (query.status !== undefined) filter.status = parseStatus('status', query.status);
  if (query.from !== undefined) filter.from = parseTime('from', query.from);
  if (query.to !== undefined) filter.to = parseTime('to', query.to);
  if (filter.from !== undefined && filter.to !== undefined && filter.to <= filter.from)
    throw invalidField(['query', 'to'], 'Input should be after from', 'value_error');
  return filter;
}

function usageFilter(query: Pick<RequestListQuery, 'token_id' | 'team' | 'project' | 'model'>): RequestSearchFilter {
  const filter: RequestSearchFilter = {};
  if (query.token_id !== undefined) filter.tokenId = query.token_id;
  if (query.team !== undefined) filter.team = query.team;
  if (query.project !== undefined) filter.project = query.project;
  if (query.model !== undefined) filter.model = query.model;
  return filter;
}

/** A page's cursor holds the last request id it showed: what a request log row's key may be. */
function isRequestId(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9._:-]{1,128}$/.test(value);
}

function iso(milliseconds: number): string {
  return new Date(milliseconds).toISOString();
}

/** A request log row as the admin API and `switchyard requests --json` show it: ids and names, never a secret (none is stored). */
export function requestView(row: StoredRequestLogEntry): RequestView {
  return {
    object: 'request',
    id: row.id,
    client_request_id: row.clientRequestId,
    created_at: iso(row.createdAt),
    logged_at: row.loggedAt === null ? null : iso(row.loggedAt),
    endpoint: row.endpoint,
    model: row.model,
    upstream_model: row.upstreamModel,
    token_id: row.tokenId,
    team: row.team,
    project: row.project,
    client_address: row.clientAddress,
    worker: row.worker,
    session_id: row.sessionId,
    session_source: row.sessionSource,
    affinity: row.affinity,
    upstream: row.upstream,
    status: row.status,
    error_code: row.errorCode,
    latency_ms: round(row.latencyMs),
    ttfb_ms: row.ttfbMs === null ? null : round(row.ttfbMs),
    prompt_tokens: row.promptTokens,
    cached_tokens: row.cachedTokens,
    cache_write_tokens: row.cacheWriteTokens,
    completion_tokens: row.completionTokens,
    reasoning_tokens: row.reasoningTokens,
    usage_source: row.usageSource,
    cost_usd: row.costUsd,
    attempts: (row.attempts ?? []).map((attempt) => ({
      credential: attempt.credential,
      outcome: attempt.outcome,
      status: attempt.status,
      ms: round(attempt.ms),
    })),
  };
}

function usageRowView(row: UsageRow): UsageRowView {
  return {
    start: iso(row.start),
    ...row.group,
    requests: row.requests,
    errors: row.errors,
    prompt_tokens: row.promptTokens,
    completion_tokens: row.completionTokens,
    cached_tokens: row.cachedTokens,
    cost_usd: row.costUsd,
  };
}

/** Tenths of a millisecond: what a person reads; the stored value keeps the rest. */
function round(milliseconds: number): number {
  return Math.round(milliseconds * 10) / 10;
}
