import type { FastifyInstance } from 'fastify';
import type { Principal } from '../../access/index.js';
import { parseRerankRequest } from '../../api/rerank-request.js';
import type { RerankService } from '../../services/index.js';
import type { RequestRecord } from '../../usage/index.js';
import { sessionHeaders } from '../session-headers.js';

export function registerRerankRoute(app: FastifyInstance, reranker: RerankService): void {
  app.post('/v1/rerank', { config: { scope: 'rerank', endpoint: 'rerank' } }, async (request, reply) => {
    const rerankRequest = parseRerankRequest(request.body);
    const record = request.record as RequestRecord;
    const list = await reranker.rerank({
      principal: request.principal as Principal,
      request: rerankRequest,
      record,
      sessionHeader: request.headers['x-session-id'],
      cancellation: request.cancellation as AbortSignal,
    });
    record.markFirstByte();
    return reply.headers(sessionHeaders(record)).send(list);
  });
}
