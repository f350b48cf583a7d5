import type { FastifyInstance } from 'fastify';

const HEALTHY = JSON.stringify({ status: 'ok' });

/** What `/ready` says: `ready` (200), or why not (503) in one word that tells an attacker nothing. */
export type Readiness = 'ready' | 'draining' | 'unavailable';

/**
 * `GET /health`: `{"status":"ok"}` while the process serves, whatever its dependencies do (a
 * gateway without its shared state still serves: docs/state.md), draining included. `detail`
 * adds what operators watch beside it, such as whether the shared state is declared down and how
 * often it was.
 */
export function registerHealthRoute(app: FastifyInstance, detail?: () => Readonly<Record<string, unknown>>): void {
  app.get('/health', { config: { probe: true } }, (_request, reply) => {
    reply.type('application/json').send(detail === undefined ? HEALTHY : JSON.stringify({ status: 'ok', ...detail() }));
  });
}

/**
 * `GET /ready`, without authentication: 200 `{"status":"ready"}` when the database and the shared
 * state answer and the process is not draining; else 503 with `draining` or `unavailable`, so that
 * a load balancer stops sending before connections close (docs/operations.md#readiness).
 */
export function registerReadyRoute(app: FastifyInstance, readiness: () => Promise<Readiness>): void {
  app.get('/ready', { config: { probe: true } }, async (_request, reply) => {
    const status = await readiness();
    reply
      .code(status === 'ready' ? 200 : 503)
      .type('application/json')
      .header('cache-control', 'no-store')
      .send(JSON.stringify({ status }));
  });
}
