import { fastifyCookie } from '@fastify/cookie';
import type { FastifyRequest } from 'fastify';
import { csrfTokenMatches, type ConsoleSession, type ConsoleSessions, type Principal, type TokenAuthenticator } from '../access/index.js';
import { nearestValue, plainAddress, type TrustedProxies } from '../core/index.js';
import { echo, GatewayError } from '../errors/index.js';

/** The console's session cookie: httpOnly, SameSite=Strict, sent only to the admin API. */
export const CONSOLE_COOKIE = 'switchyard_console';
export const CONSOLE_COOKIE_PATH = '/admin/v1';
export const CSRF_HEADER = 'x-csrf-token';

/** A request admitted by its console cookie: the session, and the secret that names it (to end it). */
export interface ConsoleCaller {
  readonly secret: string;
  readonly session: ConsoleSession;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Admits admin API calls made by the console with its cookie instead of a bearer token. A call
 * that changes something must also carry the session's CSRF token and come from the gateway's own
 * origin: SameSite=Strict keeps the cookie from other sites, but another port of the same host is
 * the same site, and a page there could otherwise post a form with the cookie attached.
 */
export class ConsoleGate {
  constructor(
    private readonly sessions: ConsoleSessions,
    private readonly authenticator: TokenAuthenticator,
    /** Origins the console is also served from (a proxy that rewrites Host): `console.origins`. */
    private readonly origins: ReadonlySet<string>,
    /** Whose `X-Forwarded-Host` and `X-Forwarded-Proto` say how the browser reached us: `server.trusted_proxies`. */
    private readonly proxies: TrustedProxies,
  ) {}

  /** The session secret of the request's console cookie, or null when it has none. */
  static secretOf(cookieHeader: string | undefined): string | null {
    if (cookieHeader === undefined || !cookieHeader.includes(CONSOLE_COOKIE)) return null;
    return fastifyCookie.parse(cookieHeader)[CONSOLE_COOKIE] ?? null;
  }

  async admit(request: FastifyRequest, secret: string): Promise<{ principal: Principal; caller: ConsoleCaller }> {
    const session = await this.sessions.find(secret);
    if (session === null) throw new GatewayError('console_session_ended', 'The console session has ended; sign in again.');
    if (!SAFE_METHODS.has(request.method)) {
      const refusal = this.originRefusal(request);
      if (refusal !== null) throw new GatewayError('csrf_check_failed', refusal);
      const header = request.headers[CSRF_HEADER];
      if (!csrfTokenMatches(session, typeof header === 'string' ? header : undefined)) {
        throw new GatewayError('csrf_check_failed', "Refused: the console session's CSRF token is missing or wrong; reload the console.");
      }
    }
    const principal = await this.authenticator.authenticateHash(session.tokenHash);
    return { principal, caller: { secret, session } };
  }

  /**
   * Whether the browser reached the console over https: by TLS to the gateway itself, by
   * `X-Forwarded-Proto: https` from a trusted proxy, or as its `Origin` says (a TLS-terminating
   * proxy that is not listed still makes the cookie `Secure`: a browser on https sends that Origin).
   */
  reachedOverHttps(request: FastifyRequest): boolean {
    if (request.protocol === 'https') return true;
    if (this.proxies.trusts(request.socket.remoteAddress) && nearestValue(request.headers['x-forwarded-proto'])?.toLowerCase() === 'https') return true;
    return request.headers.origin?.startsWith('https://') === true;
  }

  /**
   * Why the `Origin` does not name this gateway as the browser reached it, or null when it does.
   * The gateway's own address is the request's `Host`, by http or https (a TLS-terminating proxy
   * makes an https page reach us over http); from a trusted proxy, its `X-Forwarded-Host` and
   * `X-Forwarded-Proto`; or one of the configured origins. No `Origin` at all is refused: browsers
   * send it on every cross-origin request and on same-origin ones that are not GET or HEAD.
   */
  private originRefusal(request: FastifyRequest): string | null {
    const { origin } = request.headers;
    if (origin === undefined || origin === 'null') {
      return `Refused: this call changes something and carries ${origin === undefined ? 'no Origin' : 'an opaque Origin (null)'}, so it cannot be told from a forged one. The console's browser sends it; a script should use a bearer token instead of the cookie.`;
    }
    if (this.origins.has(origin)) return null;
    const { headers } = request;
    const forwarded = this.proxies.trusts(request.socket.remoteAddress);
    const host = (forwarded ? nearestValue(headers['x-forwarded-host']) : undefined) ?? headers.host;
    const scheme = forwarded ? nearestValue(headers['x-forwarded-proto'])?.toLowerCase() : undefined;
    if (host !== undefined && originNames(origin, scheme, host)) return null;
    const seen = `${scheme === undefined ? '' : `${scheme}://`}${host ?? 'no Host'}`;
    const ignored =
      !forwarded && (headers['x-forwarded-host'] !== undefined || headers['x-forwarded-proto'] !== undefined)
        ? ` X-Forwarded-Host/-Proto were ignored: this connection came from ${plainAddress(request.socket.remoteAddress ?? 'an unknown address')}, which server.trusted_proxies does not list.`
        : '';
    return (
      `Refused: the request's Origin ${echo(origin)} does not match the host the gateway sees (${echo(seen)}); behind a reverse proxy, list it in ` +
      `server.trusted_proxies and forward X-Forwarded-Host/-Proto, or list the public origin in console.origins (docs/reverse-proxy.md).${ignored}`
    );
  }
}

/** `Origin` names `host` reached by `scheme` (either, when unknown); a scheme's default port may be written or not. */
function originNames(origin: string, scheme: string | undefined, host: string): boolean {
  const separator = origin.indexOf('://');
  if (separator === -1) return false;
  const originScheme = origin.slice(0, separator).toLowerCase();
  if (originScheme !== 'http' && originScheme !== 'https') return false;
  if (scheme !== undefined && originScheme !== scheme) return false;
  return withoutDefaultPort(origin.slice(separator + 3), originScheme) === withoutDefaultPort(host, originScheme);
}

function withoutDefaultPort(host: string, scheme: string): string {
  const lower = host.toLowerCase();
  const port = scheme === 'https' ? ':443' : ':80';
  return lower.endsWith(port) ? lower.slice(0, -port.length) : lower;
}
