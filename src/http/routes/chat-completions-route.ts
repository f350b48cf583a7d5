import type { FastifyInstance } from 'fastify';
import type { Principal } from '../../access/index.js';
import { parseChatCompletionRequest } from '../../api/chat-completion-request.js';
import type { ChatCompletionService } from '../../services/index.js';
import type { RequestRecord } from '../../usage/index.js';
import { writeEventStream } from '../event-stream.js';
import type { PausedStreams } from '../paused-streams.js';
import { sendBody } from '../send-response.js';
import { appendSessionHeaders } from '../session-headers.js';

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
      await writeEventStream(reply.raw, appendSessionHeaders(['x-request-id', record.publicId], record), outcome.events, record, pausedStreams, (error) =>
        request.log.warn({ err: error, requestId: record.id, clientRequestId: record.clientRequestId }, 'stream failed after the first byte'),
      );
      return reply;
    }
    const outcome = await chat.complete(input);
    record.markFirstByte();
    // The upstream's bytes as they are: one write of status, headers and body.
    reply.hijack();
    sendBody(reply.raw, 200, 'application/json', outcome.payload, appendSessionHeaders(['x-request-id', record.publicId], record));
    return reply;
  });
}
