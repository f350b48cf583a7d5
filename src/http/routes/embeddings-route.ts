import type { FastifyInstance } from 'fastify';
import type { Principal } from '../../access/index.js';
import { parseEmbeddingsRequest } from '../../api/embeddings-request.js';
import type { EmbeddingService } from '../../services/index.js';
import type { RequestRecord } from '../../usage/index.js';
import { sessionHeaders } from '../session-headers.js';

export function registerEmbeddingsRoute(app: FastifyInstance, embeddings: EmbeddingService): void {
  app.post('/v1/embeddings', { config: { scope: 'embeddings', endpoint: 'embeddings' } }, async (request, reply) => {
    const parsed = parseEmbeddingsRequest(request.body);
    const record = request.record as RequestRecord;
    const list = await embeddings.embed({
      principal: request.principal as Principal,
      parsed,
      record,
      sessionHeader: request.headers['x-session-id'],
      cancellation: request.cancellation as AbortSignal,
    });
    record.markFirstByte();
    return reply.headers(sessionHeaders(record)).send(list);
  });
}
