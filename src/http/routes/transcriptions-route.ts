import { extname } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Principal } from '../../access/index.js';
import { detectAudioFormat } from '../../api/audio-format.js';
import { AUDIO_CONTENT_TYPES, MAX_TRANSCRIPTION_BYTES, parseTranscriptionFields } from '../../api/transcription-request.js';
import type { TranscriptionService } from '../../services/index.js';
import type { RequestRecord } from '../../usage/index.js';
import { fileIssue, readUpload } from '../multipart-upload.js';
import { sessionHeaders } from '../session-headers.js';

export function registerTranscriptionsRoute(app: FastifyInstance, transcriptions: TranscriptionService): void {
  app.post('/v1/audio/transcriptions', { config: { scope: 'audio:transcribe', endpoint: 'audio.transcriptions' } }, async (request, reply) => {
    const upload = await readUpload(request, 'file', MAX_TRANSCRIPTION_BYTES);
    try {
      const { file } = upload;
      if (file === null) throw fileIssue('Field required', 'missing');
      if (file.tooLarge) {
        // The rest of the upload is never read: close the connection instead of draining it.
        reply.header('connection', 'close');
        throw fileIssue(`File is larger than ${MAX_TRANSCRIPTION_BYTES / (1024 * 1024)} MB`, 'too_large');
      }
      const format = detectAudioFormat(file.head);
      if (format === null) throw fileIssue('File is not WAV, MP3, M4A, FLAC, OGG or WebM audio', 'value_error');
      const fields = parseTranscriptionFields(upload.fields);
      const record = request.record as RequestRecord;
      const { contentType, extension } = AUDIO_CONTENT_TYPES[format];
      // Upstreams judge the format by the file name's extension: give them the one the bytes say.
      const stem = file.filename.slice(0, file.filename.length - extname(file.filename).length) || 'audio';
      const result = await transcriptions.transcribe({
        principal: request.principal as Principal,
        model: fields.model,
        file: { path: file.path, size: file.size, filename: `${stem}.${extension}`, contentType },
        fields: fields.passthrough,
        record,
      sessionHeader: request.headers['x-session-id'],
        cancellation: request.cancellation as AbortSignal,
      });
      record.markFirstByte();
      return await reply.headers(sessionHeaders(record)).type(result.contentType).send(result.body);
    } finally {
      await upload.discard();
    }
  });
}
