import type { FastifyInstance } from 'fastify';

const HEALTHY = JSON.stringify({ status: 'ok' });

/**
 * `GET /health`: `{"status":"ok"}` while the process serves, whatever its dependencies do (a
 * gateway without its shared state still serves: docs/state.md). `detail` adds what operators
 * watch beside it, such as whether the shared state is declared down and how often it was.
 */
export function registerHealthRoute(app: FastifyInstance, detail?: () => Readonly<Record<string, unknown>>): void {
  app.get('/health', (_request, reply) => {
    reply.type('application/json').send(detail === undefined ? HEALTHY : JSON.stringify({ status: 'ok', ...detail() }));
  });
}
