import type { FastifyInstance } from 'fastify';

/** What `/metrics` serves: the registry's exposition (observability/metrics.ts). */
export interface MetricsExposition {
  readonly contentType: string;
  text(): Promise<string>;
}

/**
 * `GET /metrics` on the main port, for a token with the `metrics` scope (401 and 403 as on every
 * route). Not a logged endpoint: scrapes are neither in the request log nor in the metrics.
 */
export function registerMetricsRoute(app: FastifyInstance, metrics: MetricsExposition): void {
  app.get('/metrics', { config: { scope: 'metrics' } }, async (_request, reply) => {
    const text = await metrics.text();
    reply.type(metrics.contentType).header('cache-control', 'no-store').send(text);
  });
}
