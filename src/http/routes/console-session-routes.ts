import fastifyCookie from '@fastify/cookie';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ConsoleSession, ConsoleSessions } from '../../access/index.js';
import { GatewayError } from '../../errors/index.js';
import { CONSOLE_COOKIE, CONSOLE_COOKIE_PATH, type ConsoleCaller, type ConsoleGate } from '../console-gate.js';

const SESSION_PATH = '/admin/v1/console/session';

/** Who a session stands for, as the console shows it next to "Sign out". */
export type DescribeToken = (tokenId: string) => Promise<{ id: string; name: string | null; team: string }>;

/**
 * The console's sign-in, reload and sign-out (docs/console.md):
 * - `POST /admin/v1/console/session` with an admin bearer token opens a session: the cookie
 *   (httpOnly, SameSite=Strict, path /admin/v1) and, in the body, the CSRF token the console
 *   sends with every call that changes something;
 * - `GET` (with the cookie) gives the CSRF token again to a reloaded page, which keeps it only in memory;
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
    scope.get(SESSION_PATH, { config: { scope: 'admin' } }, async (request) => sessionBody(consoleCaller(request).session, describeToken));
    scope.delete(SESSION_PATH, { config: { scope: 'admin' } }, async (request, reply) => {
      await sessions.end(consoleCaller(request).secret);
      reply.clearCookie(CONSOLE_COOKIE, { path: CONSOLE_COOKIE_PATH, httpOnly: true, sameSite: 'strict', secure: gate.reachedOverHttps(request) });
      return reply.send({ object: 'console_session', ended: true });
    });
  });
}

function consoleCaller(request: FastifyRequest): ConsoleCaller {
  if (request.consoleCaller === null) throw new GatewayError('console_session_ended', 'No console session: this call was made with a bearer token, not the console\'s cookie.');
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
