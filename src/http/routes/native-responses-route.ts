import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Principal } from '../../access/index.js';
import type { NativeOutcome, NativeService } from '../../services/index.js';
import type { RequestRecord } from '../../usage/index.js';
import { writeByteStream } from '../byte-stream.js';
import { maskedErrorEvents } from '../masked-error-events.js';
import { NATIVE_ERROR_WIRE } from '../error-response.js';
import type { PausedStreams } from '../paused-streams.js';
import { appendSessionHeaders } from '../session-headers.js';
import { answerError } from '../answer-error.js';
import { keepJsonBodies, type KeptJsonBody } from '../kept-json-body.js';

/**
 * `POST /v1/native/responses`, in a scope of its own: its body parser keeps the bytes as received
 * (compressed or not) beside the parsed JSON, with the same rules as every other JSON body, and
 * its errors use the body Codex CLI understands for usage limits.
 */
export function registerNativeResponsesRoute(app: FastifyInstance, native: NativeService, pausedStreams: PausedStreams, bodyLimitBytes: number): void {
  void app.register(async (scope) => {
    keepJsonBodies(scope, bodyLimitBytes, 'received');
    scope.setErrorHandler((error, request, reply) => answerError(error, request, reply, NATIVE_ERROR_WIRE));

    scope.post('/v1/native/responses', { config: { scope: 'native', endpoint: 'native.responses' } }, async (request, reply) => {
      const record = request.record as RequestRecord;
      const outcome = await openNative(native, request);
      reply.hijack();
      const headers = appendSessionHeaders(
        ['x-request-id', record.publicId, 'cache-control', 'no-cache', 'x-accel-buffering', 'no', ...outcome.headers],
        record,
      );
      // The upstream's bytes, except the quoted keys its error events may carry.
      await writeByteStream(reply.raw, outcome.statusCode, headers, maskedErrorEvents(outcome.body), record, pausedStreams, (error) =>
        request.log.warn({ err: error, requestId: record.id }, 'native stream failed after the first byte'),
      );
      return reply;
    });
  });
}

/**
 * Opens the upstream stream, then lets go of the request body: a stream may stay open for minutes,
 * and Codex resends the whole conversation every turn (tens of kilobytes), which nothing needs
 * once the upstream has answered.
 */
async function openNative(native: NativeService, request: FastifyRequest): Promise<NativeOutcome> {
  const { raw, parsed } = request.body as KeptJsonBody;
  request.body = undefined;
  return native.open({
    principal: request.principal as Principal,
    record: request.record as RequestRecord,
    cancellation: request.cancellation as AbortSignal,
    body: raw,
    parsed,
    headers: request.headers,
  });
}
