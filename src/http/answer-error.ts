import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorHeaders, OPENAI_ERROR_WIRE, settleError, type ErrorWire } from './error-response.js';
import { clientRequestId } from './request-id.js';
import { sessionHeaders } from './session-headers.js';

/**
 * Answers a request whose route or stage failed: the error settled on its record and logged when
 * it is a bug (`settleError`), then sent with its status, headers and body.
 */
export function answerError(rawError: unknown, request: FastifyRequest, reply: FastifyReply, wire: ErrorWire = OPENAI_ERROR_WIRE): void {
  // Answered already from outside the route (a body timeout, the shutdown deadline): what
  // failed now is the route noticing its connection went away.
  if (reply.raw.headersSent) return;
  // A held 429 (pipeline.ts) is what the caller hit first: it is the answer, whatever the body's parse said.
  const held = request.limitRefusal;
  const error = settleError(held ?? rawError, request.record, request.log, request.id, clientRequestId(request.raw));
  // The rest of an oversized body is not worth reading: answer, then drop the connection. So with
  // a held 429 whose body failed to arrive whole.
  if (error.code === 'payload_too_large' || (held !== null && rawError !== held)) reply.header('connection', 'close');
  if (request.record !== null) reply.headers(sessionHeaders(request.record));
  void reply.code(wire.status(error)).headers(errorHeaders(error)).send(wire.body(error));
}
