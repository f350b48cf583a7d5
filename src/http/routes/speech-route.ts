import type { FastifyInstance } from 'fastify';
import type { Principal } from '../../access/index.js';
import { parseSpeechRequest } from '../../api/speech-request.js';
import type { SpeechService } from '../../services/index.js';
import type { RequestRecord } from '../../usage/index.js';
import { toGatewayError } from '../error-response.js';
import type { PausedStreams } from '../paused-streams.js';
import { sessionHeaders } from '../session-headers.js';

export function registerSpeechRoute(app: FastifyInstance, speech: SpeechService, pausedStreams: PausedStreams): void {
  app.post('/v1/audio/speech', { config: { scope: 'audio:speak', endpoint: 'audio.speech' } }, async (request, reply) => {
    const speechRequest = parseSpeechRequest(request.body);
    const record = request.record as RequestRecord;
    const outcome = await speech.speak({
      principal: request.principal as Principal,
      request: speechRequest,
      record,
      sessionHeader: request.headers['x-session-id'],
      cancellation: request.cancellation as AbortSignal,
    });
    record.markFirstByte();
    // Written here rather than piped by Fastify, so that a client that stops reading is bounded
    // like a chat stream's (PausedStreams) instead of holding the upstream for ever.
    reply.hijack();
    const response = reply.raw;
    response.writeHead(200, { ...(reply.getHeaders() as Record<string, string>), ...sessionHeaders(record), 'content-type': outcome.contentType });
    try {
      for await (const chunk of outcome.audio) {
        if (response.destroyed) return;
        // Leaving the loop ends the audio, which stops the upstream.
        if (!response.write(chunk) && !(await pausedStreams.waitForReader(response, record))) return;
      }
      response.end();
    } catch (error) {
      // Mid-stream: the status is sent, so the only way to say it failed is to cut the response.
      record.errorCode ??= toGatewayError(error).code;
      request.log.warn({ err: error, requestId: record.id }, 'speech stream failed after the first byte');
      response.destroy();
    }
  });
}
