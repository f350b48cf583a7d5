import type { IncomingHttpHeaders } from 'node:http';

/**
 * The client's headers the native upstream gets: what Codex CLI sends to carry its session, turn
 * and client identity (`x-codex-*` included, so a header of a later Codex version passes too), and
 * what describes the body (sent as received). Never the client's authorization or cookies, the
 * hop-by-hop headers, or forwarding headers: the credential and the connection are the gateway's.
 */
const REQUEST_HEADERS: ReadonlySet<string> = new Set([
  'accept',
  'content-type',
  'content-encoding',
  'session-id',
  'session_id',
  'thread-id',
  'conversation_id',
  'x-client-request-id',
  'originator',
  'user-agent',
  'version',
  'openai-beta',
]);

/**
 * The upstream's response headers the client gets: the body's type, Codex's quota and turn state
 * (`x-codex-*`: without `x-codex-turn-state` echoed back, Codex loses its turn), the model that
 * answered, and rate-limit hints. Never its cookies, connection or framing headers.
 */
const RESPONSE_HEADERS: ReadonlySet<string> = new Set([
  'content-type',
  'openai-model',
  'x-openai-model',
  'x-models-etag',
  'x-reasoning-included',
  'x-oai-request-id',
  'retry-after',
]);

const CODEX_PREFIX = 'x-codex-';
const RATE_LIMIT_PREFIX = 'x-ratelimit-';

/** The client's headers to forward, as an object of single values (Node joins repeats). */
export function forwardedRequestHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const forwarded: Record<string, string> = {};
  for (const name in headers) {
    if (!REQUEST_HEADERS.has(name) && !name.startsWith(CODEX_PREFIX)) continue;
    const value = headers[name];
    if (value !== undefined) forwarded[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return forwarded;
}

/** The upstream's headers to pass on, as a flat name/value list for `writeHead`. */
export function forwardedResponseHeaders(headers: IncomingHttpHeaders): string[] {
  const forwarded: string[] = [];
  for (const name in headers) {
    if (!RESPONSE_HEADERS.has(name) && !name.startsWith(CODEX_PREFIX) && !name.startsWith(RATE_LIMIT_PREFIX)) continue;
    const value = headers[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const each of value) forwarded.push(name, each);
    else forwarded.push(name, value);
  }
  return forwarded;
}
