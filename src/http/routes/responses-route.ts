import type { FastifyInstance } from 'fastify';
import type { Principal } from '../../access/index.js';
import { parseResponsesRequest } from '../../api/responses-request.js';
import { responsesErrorEvent, type ResponsesService } from '../../services/index.js';
import type { RequestRecord } from '../../usage/index.js';
import { midStreamFailure } from '../error-response.js';
import type { PausedStreams } from '../paused-streams.js';
import { writeNamedEventStream } from '../named-event-stream.js';
import { sendBody } from '../send-response.js';
import { appendSessionHeaders } from '../session-headers.js';

/** `POST /v1/responses` (scope `chat`): the OpenAI Responses API over every chat model (docs/responses-api.md). */
export function registerResponsesRoute(app: FastifyInstance, responses: ResponsesService, pausedStreams: PausedStreams): void {
  app.post('/v1/responses', { config: { scope: 'chat', endpoint: 'responses' } }, async (request, reply) => {
    const body = parseResponsesRequest(request.body);
    const record = request.record as RequestRecord;
    const failedMidStream = midStreamFailure(record, request.log);
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
