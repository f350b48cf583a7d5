import fastifyCookie from '@fastify/cookie';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ConsoleSession, ConsoleSessions } from '../../access/index.js';
import { GatewayError, isGatewayError } from '../../errors/index.js';
import { CONSOLE_COOKIE, CONSOLE_COOKIE_PATH, ConsoleGate, type ConsoleCaller } from '../console-gate.js';

const SESSION_PATH = '/admin/v1/console/session';

/** Who a session stands for, as the console shows it next to "Sign out". */
export type DescribeToken = (tokenId: string) => Promise<{ id: string; name: string | null; team: string }>;

/**
 * The console's sign-in, reload and sign-out (docs/console.md):
 * - `POST /admin/v1/console/session` with an admin bearer token opens a session: the cookie
 *   (httpOnly, SameSite=Strict, path /admin/v1) and, in the body, the CSRF token the console
 *   sends with every call that changes something;
 * - `GET` gives the CSRF token again to a reloaded page, which keeps it only in memory, or says
 *   `signed_in: false` (200) when the request has no live session;
 * - `DELETE` ends the session on the server: the cookie is refused from then on, wherever it is kept.
 * The cookie plugin is registered in this scope alone: its `onSend` hook is not paid by /v1.
 */
export function registerConsoleSessionRoutes(app: FastifyInstance, sessions: ConsoleSessions, describeToken: DescribeToken, gate: ConsoleGate): void {
  void app.register(async (scope) => {
    await scope.register(fastifyCookie, { hook: false });
    scope.post(SESSION_PATH, { config: { scope: 'admin' } }, async (request, reply) => {
      const { principal } = request;
      if (principal === null || request.consoleCaller !== null) {
        throw new GatewayError('missing_api_key', 'Sign in with an admin token: send "Authorization: Bearer <token>".');
      }
      const { secret, session } = await sessions.open(principal);
      reply.setCookie(CONSOLE_COOKIE, secret, {
        path: CONSOLE_COOKIE_PATH,
        httpOnly: true,
        sameSite: 'strict',
        secure: gate.reachedOverHttps(request),
        maxAge: Math.floor((session.expiresAt - session.createdAt) / 1_000),
      });
      return reply.code(201).send(await sessionBody(session, describeToken));
    });
    // The console asks this on every load, signed in or not: "no session" is an answer (200), not an
    // error, so that the sign-in page does not log a 401 in the browser's console. Not scoped: the
    // cookie is checked here, as the console gate checks it for the other admin calls.
    scope.get(SESSION_PATH, async (request, reply) => {
      const secret = request.headers.authorization === undefined ? ConsoleGate.secretOf(request.headers.cookie) : null;
      if (secret === null) return { object: 'console_session', signed_in: false };
      let admitted: Awaited<ReturnType<ConsoleGate['admit']>>;
      try {
        admitted = await gate.admit(request, secret);
      } catch (error) {
        // Ended, idle, its token revoked or expired: signed out, and the stale cookie goes too.
        if (!isGatewayError(error) || error.status !== 401) throw error;
        reply.clearCookie(CONSOLE_COOKIE, { path: CONSOLE_COOKIE_PATH, httpOnly: true, sameSite: 'strict', secure: gate.reachedOverHttps(request) });
        return { object: 'console_session', signed_in: false };
      }
      if (!admitted.principal.scopes.has('admin')) return { object: 'console_session', signed_in: false };
      return { ...(await sessionBody(admitted.caller.session, describeToken)), signed_in: true };
    });
    scope.delete(SESSION_PATH, { config: { scope: 'admin' } }, async (request, reply) => {
      await sessions.end(consoleCaller(request).secret);
      reply.clearCookie(CONSOLE_COOKIE, { path: CONSOLE_COOKIE_PATH, httpOnly: true, sameSite: 'strict', secure: gate.reachedOverHttps(request) });
      return reply.send({ object: 'console_session', ended: true });
    });
  });
}

function consoleCaller(request: FastifyRequest): ConsoleCaller {
  if (request.consoleCaller === null)
    throw new GatewayError('console_session_ended', "No console session: this call was made with a bearer token, not the console's cookie.");
  return request.consoleCaller;
}

async function sessionBody(session: ConsoleSession, describeToken: DescribeToken): Promise<Record<string, unknown>> {
  return {
    object: 'console_session',
    csrf_token: session.csrfToken,
    created_at: new Date(session.createdAt).toISOString(),
    expires_at: new Date(session.expiresAt).toISOString(),
    token: await describeToken(session.tokenId),
  };
}
