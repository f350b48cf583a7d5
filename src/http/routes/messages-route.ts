import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../../access/index.js';
import { parseMessagesRequest } from '../../api/messages-request.js';
import type { GatewayError } from '../../errors/index.js';
import { messagesErrorBody, messagesStatus, type MessagesService } from '../../services/index.js';
import type { RequestRecord } from '../../usage/index.js';
import { answerError } from '../answer-error.js';
import { keepJsonBodies, type KeptJsonBody } from '../kept-json-body.js';
import { cappedMessage, forCaller, midStreamFailure, toGatewayError, type ErrorWire } from '../error-response.js';
import { writeNamedEventStream } from '../named-event-stream.js';
import type { PausedStreams } from '../paused-streams.js';
import { sendBody } from '../send-response.js';
import { appendSessionHeaders } from '../session-headers.js';

/** Errors as Anthropic says them: its envelope, its statuses (529 for overloaded), so that its clients retry as they would. */
const MESSAGES_ERROR_WIRE: ErrorWire = {
  status: anthropicStatus,
  body: (error) => messagesErrorBody(anthropicStatus(error), cappedMessage(error)),
};

function anthropicStatus(error: GatewayError): number {
  return messagesStatus(error.status, error.upstream?.class === 'overloaded');
}

/**
 * `POST /v1/messages` and `POST /v1/messages/count_tokens` (scope `chat`): Anthropic's Messages
 * API over every chat model (docs/messages-api.md), for Claude Code and the Anthropic SDKs. In a
 * scope of its own: its body parser keeps the decoded bytes beside the parsed JSON (an Anthropic
 * upstream gets them as they came), the token may come in `x-api-key`, and errors are Anthropic's.
 */
export function registerMessagesRoutes(app: FastifyInstance, messages: MessagesService, pausedStreams: PausedStreams, bodyLimitBytes: number): void {
  void app.register(async (scope) => {
    keepJsonBodies(scope, bodyLimitBytes, 'decoded');
    scope.setErrorHandler((error, request, reply) => answerError(error, request, reply, MESSAGES_ERROR_WIRE));

    scope.post('/v1/messages', { config: { scope: 'chat', endpoint: 'messages', apiKeyHeader: true } }, async (request, reply) => {
      const record = request.record as RequestRecord;
      const failedMidStream = midStreamFailure(record, request.log);
      const outcome = await messages.create({ ...input(request, true), failedMidStream });
      const headers = appendSessionHeaders(['x-request-id', record.publicId], record);
      reply.hijack();
      if (outcome.kind === 'json') {
        record.markFirstByte();
        sendBody(reply.raw, 200, 'application/json', outcome.payload, headers);
        return reply;
      }
      // Written here, not by Fastify: events go out as they arrive, within PausedStreams' bounds.
      await writeNamedEventStream(reply.raw, headers, outcome, record, pausedStreams, failedMidStream, MESSAGES_ERROR_WIRE.body);
      return reply;
    });

    scope.post(
      '/v1/messages/count_tokens',
      { config: { scope: 'chat', endpoint: 'messages.count_tokens', apiKeyHeader: true } },
      async (request, reply: FastifyReply) => {
        const record = request.record as RequestRecord;
        const payload = await messages.countTokens({
          ...input(request, false),
          failedMidStream: (error) => forCaller(toGatewayError(error), record.publicId),
        });
        reply.hijack();
        record.markFirstByte();
        sendBody(reply.raw, 200, 'application/json', payload, ['x-request-id', record.publicId]);
        return reply;
      },
    );
  });
}

/** What both routes hand the service; the body is let go of, so a long stream does not hold it. */
function input(request: FastifyRequest, isMessage: boolean) {
  const { raw, parsed } = request.body as KeptJsonBody;
  request.body = undefined;
  return {
    principal: request.principal as Principal,
    record: request.record as RequestRecord,
    cancellation: request.cancellation as AbortSignal,
    sessionHeader: request.headers['x-session-id'],
    request: parseMessagesRequest(parsed, isMessage),
    raw,
    headers: request.headers,
  };
}
