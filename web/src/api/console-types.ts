import type { UsageRow } from './types';

/**
 * The console's wire types that the admin API's OpenAPI document does not describe (types.ts,
 * generated, has those it does): the console's own session routes, and what the console reads
 * inside an open object.
 */

export interface ConsoleSession {
  object: 'console_session';
  csrf_token: string;
  expires_at: string;
  token: { id: string; name: string | null; team: string };
}

/** What `GET /admin/v1/console/session` answers: the session of the cookie, or that there is none (200 either way). */
export type SessionProbe = (ConsoleSession & { signed_in: true }) | { object: 'console_session'; signed_in: false };

/** An OAuth account's own state, as the console reads it from a credential's open `account` object. */
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

/** The counts of a usage row; the console sums them per group too. */
export type UsageCounts = Pick<UsageRow, 'requests' | 'errors' | 'prompt_tokens' | 'completion_tokens' | 'cached_tokens' | 'cost_usd'>;
