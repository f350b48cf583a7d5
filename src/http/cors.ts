import type { IncomingMessage, ServerResponse } from 'node:http';

const ALLOWED_METHODS = 'GET, POST, OPTIONS';
const ALLOWED_HEADERS = 'authorization, content-type, x-session-id, x-request-id';
/** What a browser app may read of a response: its ids, its session, its own limits, when to retry. */
const EXPOSED_HEADERS = [
  'x-request-id',
  'x-session-id',
  'x-session-source',
  'x-session-affinity',
  'x-ratelimit-limit-requests',
  'x-ratelimit-remaining-requests',
  'x-ratelimit-reset-requests',
  'x-ratelimit-limit-tokens',
  'x-ratelimit-remaining-tokens',
  'x-ratelimit-reset-tokens',
  'retry-after',
].join(', ');
/** How long a browser may reuse a preflight's answer. */
const PREFLIGHT_MAX_AGE_SECONDS = '600';

/**
 * CORS for browser apps, from `server.cors.allowed_origins` (exact origins, or `*` for any). Runs
 * before routing, for every route: a preflight (`OPTIONS` with `Origin` and
 * `Access-Control-Request-Method`) is answered 204 here, with the allow headers only for an allowed
 * origin; any other request from an allowed origin gets `Access-Control-Allow-Origin` and the
 * exposed headers. Requests without `Origin` (every SDK, curl) pay one header lookup. Returns
 * true when it answered the request.
 */
export function corsHandler(allowedOrigins: readonly string[]): ((request: IncomingMessage, response: ServerResponse) => boolean) | null {
  if (allowedOrigins.length === 0) return null;
  const anyOrigin = allowedOrigins.includes('*');
  const allowed = new Set(allowedOrigins);
  return (request, response) => {
    const origin = request.headers.origin;
    if (origin === undefined) return false;
    const permitted = anyOrigin || allowed.has(origin);
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined) {
      const headers: Record<string, string> = { vary: 'origin', 'content-length': '0' };
      if (permitted) {
        headers['access-control-allow-origin'] = origin;
        headers['access-control-allow-methods'] = ALLOWED_METHODS;
        headers['access-control-allow-headers'] = ALLOWED_HEADERS;
        headers['access-control-max-age'] = PREFLIGHT_MAX_AGE_SECONDS;
      }
      response.writeHead(204, headers);
      response.end();
      return true;
    }
    response.setHeader('vary', 'origin');
    if (permitted) {
      response.setHeader('access-control-allow-origin', origin);
      response.setHeader('access-control-expose-headers', EXPOSED_HEADERS);
    }
    return false;
  };
}
