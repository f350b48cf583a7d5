import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Principal } from '../../access/index.js';
import { parseChatCompletionRequest } from '../../api/chat-completion-request.js';
import type { Cancellation } from '../../providers/provider-adapter.js';
import type { ChatCompletionService, SessionIdentity } from '../../routing/index.js';
import type { RequestRecord } from '../../usage/index.js';
import { writeEventStream } from '../event-stream.js';

export function registerChatCompletionsRoute(app: FastifyInstance, chat: ChatCompletionService): void {
  app.post('/v1/chat/completions', { config: { scope: 'chat', endpoint: 'chat.completions' } }, async (request, reply) => {
    const chatRequest = parseChatCompletionRequest(request.body);
    // The lifecycle hook made both for this route, which has an endpoint name.
    const record = request.record as RequestRecord;
    const input = {
      principal: request.principal as Principal,
      request: chatRequest,
      sessionHeader: request.headers['x-session-id'],
      record,
      cancellation: request.cancellation as Cancellation,
    };
    if (chatRequest.stream === true) {
      const outcome = await chat.stream(input);
      setSessionHeaders(reply, outcome.session);
      await writeEventStream(reply, outcome.events, record, (error) => request.log.warn({ err: error, requestId: request.id }, 'stream failed after the first byte'));
      return reply;
    }
    const outcome = await chat.complete(input);
    setSessionHeaders(reply, outcome.session);
    record.markFirstByte();
    return reply.type('application/json').send(outcome.payload);
  });
}

function setSessionHeaders(reply: FastifyReply, session: SessionIdentity | null): void {
  if (session === null) return;
  reply.header('x-session-id', session.id);
  reply.header('x-session-source', session.source);
}
