import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { Principal } from '../../access/index.js';
import { parseSpeechRequest } from '../../api/speech-request.js';
import type { Cancellation } from '../../providers/provider-adapter.js';
import type { SpeechService } from '../../routing/index.js';
import type { RequestRecord } from '../../usage/index.js';

export function registerSpeechRoute(app: FastifyInstance, speech: SpeechService): void {
  app.post('/v1/audio/speech', { config: { scope: 'audio:speak', endpoint: 'audio.speech' } }, async (request, reply) => {
    const speechRequest = parseSpeechRequest(request.body);
    const record = request.record as RequestRecord;
    const outcome = await speech.speak({
      principal: request.principal as Principal,
      request: speechRequest,
      record,
      cancellation: request.cancellation as Cancellation,
    });
    record.markFirstByte();
    // Piped with backpressure; a client that leaves destroys the stream, which stops the upstream.
    return reply.type(outcome.contentType).send(Readable.from(outcome.audio, { objectMode: false }));
  });
}
