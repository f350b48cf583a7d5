import type { FastifyInstance } from 'fastify';
import type { Principal } from '../../access/index.js';
import { parseChatCompletionRequest } from '../../api/chat-completion-request.js';
import type { SessionIdentity } from '../../routing/index.js';
import type { ChatCompletionService } from '../../services/index.js';
import type { RequestRecord } from '../../usage/index.js';
import { writeEventStream } from '../event-stream.js';
import type { PausedStreams } from '../paused-streams.js';
import { sendBody, type HeaderList } from '../send-response.js';

export function registerChatCompletionsRoute(app: FastifyInstance, chat: ChatCompletionService, pausedStreams: PausedStreams): void {
  app.post('/v1/chat/completions', { config: { scope: 'chat', endpoint: 'chat.completions' } }, async (request, reply) => {
    const chatRequest = parseChatCompletionRequest(request.body);
    const record = request.record as RequestRecord;
    const input = {
      principal: request.principal as Principal,
      request: chatRequest,
      sessionHeader: request.headers['x-session-id'],
      record,
      cancellation: request.cancellation as AbortSignal,
    };
    if (chatRequest.stream === true) {
      const outcome = await chat.stream(input);
      // Written here, not by Fastify: events go out as they arrive, within PausedStreams' bounds.
      reply.hijack();
      await writeEventStream(reply.raw, responseHeaders(record.publicId, outcome.session), outcome.events, record, pausedStreams, (error) =>
        request.log.warn({ err: error, requestId: record.id, clientRequestId: record.clientRequestId }, 'stream failed after the first byte'),
      );
      return reply;
    }
    const outcome = await chat.complete(input);
    record.markFirstByte();
    // The upstream's bytes as they are: one write of status, headers and body.
    reply.hijack();
    sendBody(reply.raw, 200, 'application/json', outcome.payload, responseHeaders(record.publicId, outcome.session));
    return reply;
  });
}

function responseHeaders(id: string, session: SessionIdentity | null): HeaderList {
  return session === null ? ['x-request-id', id] : ['x-request-id', id, 'x-session-id', session.id, 'x-session-source', session.source];
}
