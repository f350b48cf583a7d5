import { fastifyCookie } from '@fastify/cookie';
import type { FastifyRequest } from 'fastify';
import { csrfTokenMatches, type ConsoleSession, type ConsoleSessions, type Principal, type TokenAuthenticator } from '../access/index.js';
import { GatewayError } from '../errors/index.js';

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
      if (!this.sameOrigin(request)) throw new GatewayError('csrf_check_failed', 'Refused: this call did not come from the console of this gateway (Origin).');
      const header = request.headers[CSRF_HEADER];
      if (!csrfTokenMatches(session, typeof header === 'string' ? header : undefined)) {
        throw new GatewayError('csrf_check_failed', 'Refused: the console session\'s CSRF token is missing or wrong; reload the console.');
      }
    }
    const principal = await this.authenticator.authenticateHash(session.tokenHash);
    return { principal, caller: { secret, session } };
  }

  /**
   * The `Origin` must name this gateway as the browser reached it: the request's own `Host`, by
   * http or https (a TLS-terminating proxy makes an https page reach us over http), or one of the
   * configured origins. No `Origin` at all is refused: browsers send it on every cross-origin
   * request and on same-origin ones that are not GET or HEAD.
   */
  private sameOrigin(request: FastifyRequest): boolean {
    const origin = request.headers.origin;
    if (origin === undefined || origin === 'null') return false;
    if (this.origins.has(origin)) return true;
    const host = request.headers.host;
    return host !== undefined && (origin === `http://${host}` || origin === `https://${host}`);
  }
}
