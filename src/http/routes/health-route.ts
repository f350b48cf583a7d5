import type { FastifyInstance } from 'fastify';

const HEALTHY = JSON.stringify({ status: 'ok' });

export function registerHealthRoute(app: FastifyInstance): void {
  app.get('/health', (_request, reply) => {
    reply.type('application/json').send(HEALTHY);
  });
}
