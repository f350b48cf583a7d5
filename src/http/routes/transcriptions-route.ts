import { extname } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../../access/index.js';
import { detectAudioFormat } from '../../api/audio-format.js';
import { AUDIO_CONTENT_TYPES, MAX_TRANSCRIPTION_BYTES, parseTranscriptionFields } from '../../api/transcription-request.js';
import type { TranscriptionInput, TranscriptionService } from '../../services/index.js';
import type { RequestRecord } from '../../usage/index.js';
import { writeByteStream } from '../byte-stream.js';
import { fileIssue, readUpload } from '../multipart-upload.js';
import type { PausedStreams } from '../paused-streams.js';
import { appendSessionHeaders, sessionHeaders } from '../session-headers.js';

/**
 * `POST /v1/audio/transcriptions` and `POST /v1/audio/translations`: the same upload, limits and
 * checks; a transcript may stream (`stream=true`), a translation never does.
 */
export function registerTranscriptionsRoute(app: FastifyInstance, transcriptions: TranscriptionService, pausedStreams: PausedStreams): void {
  app.post('/v1/audio/transcriptions', { config: { scope: 'audio:transcribe', endpoint: 'audio.transcriptions' } }, (request, reply) =>
    withUpload(request, reply, 'transcribe', async (input, record) => {
      const outcome = await transcriptions.transcribe(input);
      if (outcome.kind === 'whole') return sendWhole(reply, record, outcome);
      record.markFirstByte();
      // Written here rather than piped by Fastify, so that a client that stops reading is bounded
      // like a chat stream's (PausedStreams) instead of holding the upstream for ever.
      reply.hijack();
      const headers = appendSessionHeaders(
        ['x-request-id', record.publicId, 'content-type', 'text/event-stream; charset=utf-8', 'cache-control', 'no-cache', 'x-accel-buffering', 'no'],
        record,
      );
      await writeByteStream(reply.raw, 200, headers, outcome.events, record, pausedStreams, (error) =>
        request.log.warn({ err: error, requestId: record.id }, 'transcript stream failed after the first byte'),
      );
      return reply;
    }),
  );
  app.post('/v1/audio/translations', { config: { scope: 'audio:transcribe', endpoint: 'audio.translations' } }, (request, reply) =>
    withUpload(request, reply, 'translate', async (input, record) => sendWhole(reply, record, await transcriptions.translate(input))),
  );
}

/** Reads and checks the upload (spooled to disk), hands it to `serve`, and deletes it once answered. */
async function withUpload(
  request: FastifyRequest,
  reply: FastifyReply,
  task: 'transcribe' | 'translate',
  serve: (input: TranscriptionInput, record: RequestRecord) => Promise<FastifyReply>,
): Promise<FastifyReply> {
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
    const fields = parseTranscriptionFields(upload.fields, task);
    const record = request.record as RequestRecord;
    const { contentType, extension } = AUDIO_CONTENT_TYPES[format];
    // Upstreams judge the format by the file name's extension: give them the one the bytes say.
    const stem = file.filename.slice(0, file.filename.length - extname(file.filename).length) || 'audio';
    return await serve(
      {
        principal: request.principal as Principal,
        model: fields.model,
        file: { path: file.path, size: file.size, filename: `${stem}.${extension}`, contentType },
        fields: fields.passthrough,
        stream: fields.stream,
        record,
        sessionHeader: request.headers['x-session-id'],
        cancellation: request.cancellation as AbortSignal,
      },
      record,
    );
  } finally {
    await upload.discard();
  }
}

async function sendWhole(reply: FastifyReply, record: RequestRecord, result: { contentType: string; body: Buffer }): Promise<FastifyReply> {
  record.markFirstByte();
  return await reply.headers(sessionHeaders(record)).type(result.contentType).send(result.body);
}
