/**
 * What went wrong with one upstream attempt, in the terms the router acts on:
 * - `auth`: the credential was refused (wrong, revoked, not allowed here): take it out of service.
 * - `quota`: the credential's quota or balance is spent: out of service until it is topped up.
 * - `rate_limit`: the credential is over a rate limit: cool it down for `retryAfterSeconds`.
 * - `overloaded`: the upstream is busy (503, 529): try another credential or later.
 * - `server`: the upstream failed (5xx, an unexpected status).
 * - `timeout`: first byte, idle or total timeout, or the upstream's own 408/504.
 * - `connect`: no connection (refused, reset, DNS, proxy, TLS, a connect timeout).
 * - `protocol`: the upstream answered something its protocol does not allow.
 * - `caller`: the request itself was refused (400, 404, 405, 413, 422); another credential would refuse it too.
 */
export type FailureClass = 'auth' | 'quota' | 'rate_limit' | 'overloaded' | 'server' | 'timeout' | 'connect' | 'protocol' | 'caller';

export interface UpstreamFailure {
  readonly class: FailureClass;
  /** The upstream's HTTP status; null when there was no answer (transport) or it broke mid-stream. */
  readonly status: number | null;
  /** How long the upstream asked to wait, when it said. */
  readonly retryAfterSeconds: number | null;
  /** Its rate-limit headers as sent (`x-ratelimit-*`, `anthropic-ratelimit-*`, `retry-after`…). */
  readonly rateLimitHeaders: Readonly<Record<string, string>>;
  readonly credentialId: string;
  /** The upstream's own words, for the log; never shown to callers. */
  readonly message: string;
}
