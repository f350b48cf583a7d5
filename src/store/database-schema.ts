import type { Generated } from 'kysely';

/** Times are integer milliseconds since the epoch in every dialect, so rows compare the same everywhere. */
export interface TokensTable {
  id: string;
  name: string | null;
  team: string;
  project: string | null;
  secret_hash: string;
  /** The token's first characters, enough to recognise it in a list without revealing it. */
  display_prefix: string;
  scopes: string;
  models: string | null;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
  /** JSON: the token's own rate limits and quotas; null for none. */
  limits: string | null;
}

export interface RequestLogsTable {
  id: string;
  created_at: number;
  token_id: string | null;
  team: string | null;
  project: string | null;
  endpoint: string;
  model: string | null;
  upstream: string | null;
  session_id: string | null;
  status: number;
  latency_ms: number;
  ttfb_ms: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  usage_source: string | null;
  error_code: string | null;
  client_request_id: string | null;
  /** When the row was written: the order `requests tail` follows. */
  logged_at: number | null;
  session_source: string | null;
  affinity: string | null;
  /** JSON: `[{ credential, outcome, status, ms }]`, in the order tried. */
  attempts: string | null;
  cached_tokens: number | null;
  /** Of the prompt tokens, those written to the upstream's prompt cache; null when it did not say. */
  cache_write_tokens: number | null;
  reasoning_tokens: number | null;
  /** What the request cost by the model's `price`; null when the model has none or nothing was used. */
  cost_usd: number | null;
  /** The client's address (behind a trusted proxy, the X-Forwarded-For client's); null in rows older than the column. */
  client_address: string | null;
  /** The model's name at the upstream (a deployment, a snapshot); `model` is the public id. Null for rows before it was kept. */
  upstream_model: string | null;
  /** The worker of `serve --workers` that served it; null for one process, and for rows before it was kept. */
  worker: number | null;
}

/**
 * The request log's usage per UTC hour and group (token, team, project, model), written in the
 * same transaction as the rows it counts, and kept when retention removes them: what quotas are
 * rebuilt from and what the usage charts read (docs/request-log-retention.md).
 */
export interface RequestUsageHourlyTable {
  /** The hour's first millisecond (UTC). */
  hour_start: number;
  /** The four group columns in one string, nulls told from empty strings (`usageGroupKey`): unique with the hour. */
  group_key: string;
  token_id: string | null;
  team: string | null;
  project: string | null;
  model: string | null;
  requests: number;
  /** Requests answered with a status of 400 or more. */
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  reasoning_tokens: number;
  /** Null while no request of the group and hour had a price. */
  cost_usd: number | null;
}

export interface RevisionsTable {
  name: string;
  value: Generated<number>;
}

/** An account added at run time; `sealed_document` is opened only with the gateway's secret key. */
export interface UpstreamAccountsTable {
  id: string;
  provider: string;
  /** JSON: the entry's endpoint keys (`base_url`, `token_url`). */
  settings: string;
  sealed_document: string;
  created_at: number;
  updated_at: number;
}

/** A team: what tokens belong to. `limits` is JSON (rate limits and quotas), null for none. */
export interface TeamsTable {
  id: string;
  name: string;
  limits: string | null;
  created_at: number;
  updated_at: number;
}

/** A project of a team; its id is unique within the team. */
export interface ProjectsTable {
  team: string;
  id: string;
  name: string;
  limits: string | null;
  created_at: number;
  updated_at: number;
}

/** Which release applied a migration (written since 0012-schema-history). */
export interface SchemaHistoryTable {
  migration: string;
  release: string;
  applied_at: number;
}

/**
 * The rollup added up per hour or UTC day along one dimension (docs/request-usage-summary.md):
 * the columns of other dimensions are null.
 */
export interface RequestUsageSummaryTable {
  /** 3,600,000 (an hour) or 86,400,000 (a UTC day). */
  period_ms: number;
  dimension: 'token' | 'team' | 'project' | 'model';
  period_start: number;
  /** The dimension's columns in one string, nulls told from empty strings. */
  group_key: string;
  token_id: string | null;
  team: string | null;
  project: string | null;
  model: string | null;
  requests: number;
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  reasoning_tokens: number;
  cost_usd: number | null;
}

/** Hours whose summary is behind the rollup; `marks` grows with each batch that marks one again. */
export interface RequestUsagePendingTable {
  hour_start: number;
  marks: number;
}

export interface DatabaseSchema {
  teams: TeamsTable;
  projects: ProjectsTable;
  upstream_accounts: UpstreamAccountsTable;
  tokens: TokensTable;
  request_logs: RequestLogsTable;
  request_usage_hourly: RequestUsageHourlyTable;
  request_usage_summary: RequestUsageSummaryTable;
  request_usage_pending: RequestUsagePendingTable;
  revisions: RevisionsTable;
  switchyard_schema_history: SchemaHistoryTable;
}
