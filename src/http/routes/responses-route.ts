import type { FastifyInstance } from 'fastify';
import type { Principal } from '../../access/index.js';
import { parseResponsesRequest } from '../../api/responses-request.js';
import { responsesErrorEvent, type ResponsesService } from '../../services/index.js';
import type { RequestRecord } from '../../usage/index.js';
import { forCaller, toGatewayError } from '../error-response.js';
import type { PausedStreams } from '../paused-streams.js';
import { writeNamedEventStream } from '../named-event-stream.js';
import { sendBody } from '../send-response.js';
import { appendSessionHeaders } from '../session-headers.js';

/** `POST /v1/responses` (scope `chat`): the OpenAI Responses API over every chat model (docs/responses-api.md). */
export function registerResponsesRoute(app: FastifyInstance, responses: ResponsesService, pausedStreams: PausedStreams): void {
  app.post('/v1/responses', { config: { scope: 'chat', endpoint: 'responses' } }, async (request, reply) => {
    const body = parseResponsesRequest(request.body);
    const record = request.record as RequestRecord;
    // A failure once the stream is under way: noted and logged here, told to the caller in words that name no credential.
    const failedMidStream = (error: unknown) => {
      const gatewayError = toGatewayError(error);
      record.errorCode ??= gatewayError.code;
      request.log.warn({ err: error, requestId: record.id, clientRequestId: record.clientRequestId }, 'stream failed after the first byte');
      return forCaller(gatewayError, record.publicId);
    };
    const outcome = await responses.create({
      principal: request.principal as Principal,
      request: body,
      sessionHeader: request.headers['x-session-id'],
      record,
      cancellation: request.cancellation as AbortSignal,
      failedMidStream,
    });
    const headers = appendSessionHeaders(['x-request-id', record.publicId], record);
    reply.hijack();
    if (outcome.kind === 'json') {
      record.markFirstByte();
      sendBody(reply.raw, 200, 'application/json', outcome.payload, headers);
      return reply;
    }
    // Written here, not by Fastify: events go out as they arrive, within PausedStreams' bounds.
    await writeNamedEventStream(reply.raw, headers, outcome, record, pausedStreams, failedMidStream, responsesErrorEvent);
    return reply;
  });
}
