import type { FastifyInstance } from 'fastify';
import type { Principal } from '../../access/index.js';
import { parseSpeechRequest } from '../../api/speech-request.js';
import type { SpeechService } from '../../services/index.js';
import type { RequestRecord } from '../../usage/index.js';
import { writeByteStream } from '../byte-stream.js';
import type { PausedStreams } from '../paused-streams.js';
import { appendSessionHeaders } from '../session-headers.js';

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
    // Audio is played as it arrives: an nginx in front must not buffer it (docs/reverse-proxy.md).
    const headers = appendSessionHeaders(['x-request-id', record.publicId, 'content-type', outcome.contentType, 'x-accel-buffering', 'no'], record);
    await writeByteStream(reply.raw, 200, headers, outcome.audio, record, pausedStreams, (error) =>
      request.log.warn({ err: error, requestId: record.id }, 'speech stream failed after the first byte'),
    );
    return reply;
  });
}
