/** The admin API's wire shapes, as the console reads them (snake_case, times ISO 8601 UTC). */

export interface ErrorBody {
  error: { message: string; type?: string; code?: string | null; param?: string | null };
}

export interface ListPage<T> {
  object: 'list';
  data: T[];
  next_cursor: string | null;
}

export interface ConsoleSession {
  object: 'console_session';
  csrf_token: string;
  expires_at: string;
  token: { id: string; name: string | null; team: string };
}

/** What `GET /admin/v1/console/session` answers: the session of the cookie, or that there is none (200 either way). */
export type SessionProbe = (ConsoleSession & { signed_in: true }) | { object: 'console_session'; signed_in: false };

export const LIMIT_NAMES = ['rpm', 'tpm', 'max_concurrent', 'tokens_per_day', 'tokens_per_month', 'tokens_total', 'usd_per_day', 'usd_per_month'] as const;
export type LimitName = (typeof LIMIT_NAMES)[number];
export type Limits = Partial<Record<LimitName, number>>;
/** A JSON merge patch of limits: null removes one. */
export type LimitChanges = Partial<Record<LimitName, number | null>>;

/** Mirrors src/access/scopes.ts. */
export const SCOPES = ['models:read', 'chat', 'native', 'embeddings', 'rerank', 'audio:transcribe', 'audio:speak', 'admin'] as const;

export interface Token {
  id: string;
  status: 'active' | 'revoked' | 'expired';
  name: string | null;
  team: string;
  project: string | null;
  prefix: string;
  scopes: string[];
  models: string[] | null;
  limits: Limits;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  /** Newer servers only: the time of the token's newest request in the log. */
  last_used_at?: string | null;
}

export interface CreatedToken extends Token {
  secret: string;
}

export interface NewToken {
  team: string;
  project?: string;
  name?: string;
  scopes?: string[];
  models?: string[] | null;
  expires_in?: string;
  limits?: Limits;
}

export interface TokenChanges {
  name?: string | null;
  scopes?: string[];
  models?: string[] | null;
  expires_in?: string;
  expires_at?: string | null;
  limits?: LimitChanges;
}

export interface Team {
  id: string;
  name: string;
  limits: Limits;
  created_at: string;
  updated_at: string;
}

export interface Project extends Team {
  team: string;
}

export interface Attempt {
  credential: string;
  outcome: string;
  status: number | null;
  ms: number;
}

export type Affinity = 'new' | 'kept' | 'moved' | 'overflow';

export interface RequestView {
  object: 'request';
  id: string;
  client_request_id: string | null;
  client_address: string | null;
  created_at: string;
  logged_at: string | null;
  endpoint: string;
  model: string | null;
  token_id: string | null;
  team: string | null;
  project: string | null;
  session_id: string | null;
  session_source: string | null;
  affinity: string | null;
  upstream: string | null;
  upstream_model: string | null;
  status: number;
  error_code: string | null;
  latency_ms: number;
  ttfb_ms: number | null;
  prompt_tokens: number | null;
  cached_tokens: number | null;
  completion_tokens: number | null;
  reasoning_tokens: number | null;
  usage_source: string | null;
  cost_usd: number | null;
  attempts: Attempt[];
}

export interface SessionView {
  object: 'session';
  id: string;
  turns: RequestView[];
  next_cursor: string | null;
}

export interface CredentialAccount {
  account_id?: string | null;
  plan_type?: string | null;
  token_store?: string;
  last_refresh?: string | null;
  access_token_expires_at?: string | null;
  quota?: Record<string, string> | null;
  quota_reported_at?: string | null;
  [other: string]: unknown;
}

/** Mirrors the admin API's wire shape of a credential (CredentialView in src/admin/credential-admin.ts); the console does not import server code. */
export interface Credential {
  id: string;
  provider: string;
  state: 'healthy' | 'cooling' | 'failed' | 'disabled';
  until: string | null;
  reason: string | null;
  since: string | null;
  cooldowns_in_a_row: number;
  in_flight: number;
  last_error: string | null;
  origin: 'config' | 'runtime';
  account: CredentialAccount | null;
  /** Newer servers only: attempts on it in the last window, in this process. */
  recent?: { window_seconds: number; attempts: number; failures: number };
}

export type UsageBucket = 'hour' | 'day';
export type UsageGroupBy = 'token' | 'team' | 'project' | 'model';

/** The counts of a usage row; the console sums them per group too. */
export interface UsageCounts {
  requests: number;
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  cost_usd: number | null;
}

export interface UsageRow extends UsageCounts {
  start: string;
  token_id?: string | null;
  team?: string | null;
  project?: string | null;
  model?: string | null;
}

export interface UsageView {
  object: 'usage';
  bucket: UsageBucket;
  group_by: UsageGroupBy;
  from: string;
  to: string;
  data: UsageRow[];
}
