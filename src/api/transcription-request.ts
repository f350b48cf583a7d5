import { GatewayError, type ValidationIssue } from '../errors/index.js';
import type { AudioFormat } from './audio-format.js';
import { validationError } from './validation-issues.js';

/** The spec's 25 MB, in the binary megabytes OpenAI counts its own 25 MB limit in. */
export const MAX_TRANSCRIPTION_BYTES = 25 * 1024 * 1024;

const RESPONSE_FORMATS = new Set(['json', 'text', 'verbose_json', 'srt', 'vtt']);
/** A streamed transcript is text in events: formats made of segments and times (verbose_json, srt, vtt) have no such form. */
const STREAMABLE_FORMATS = new Set(['json', 'text']);

/** ISO 639-1: every two-letter language code. */
const ISO_639_1 = new Set(
  'aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo za zh zu'.split(
    ' ',
  ),
);

export const AUDIO_CONTENT_TYPES: Record<AudioFormat, { contentType: string; extension: string }> = {
  wav: { contentType: 'audio/wav', extension: 'wav' },
  mp3: { contentType: 'audio/mpeg', extension: 'mp3' },
  m4a: { contentType: 'audio/mp4', extension: 'm4a' },
  flac: { contentType: 'audio/flac', extension: 'flac' },
  ogg: { contentType: 'audio/ogg', extension: 'ogg' },
  webm: { contentType: 'audio/webm', extension: 'webm' },
};

export interface TranscriptionFields {
  model: string | undefined;
  /** `stream=true`: the transcript as `transcript.text.delta` and `transcript.text.done` events. */
  stream: boolean;
  /** Every field but `model` and `file`, as sent, for the upstream. */
  passthrough: Array<[string, string]>;
}

/**
 * Checks the form's fields; the file is checked as it is read. `task` is the endpoint's:
 * translations never stream (OpenAI's have no `stream`).
 */
export function parseTranscriptionFields(
  fields: ReadonlyArray<readonly [string, string]>,
  task: 'transcribe' | 'translate' = 'transcribe',
): TranscriptionFields {
  const issues: ValidationIssue[] = [];
  let model: string | undefined;
  let stream = false;
  let responseFormat = 'json';
  const passthrough: Array<[string, string]> = [];
  for (const [name, value] of fields) {
    if (name === 'model') {
      if (value.trim() === '') issues.push({ loc: ['body', 'model'], msg: 'String should have at least 1 character', type: 'string_too_short' });
      model = value.trim();
      continue;
    }
    if (name === 'language' && !ISO_639_1.has(value)) {
      issues.push({ loc: ['body', 'language'], msg: 'Input should be an ISO-639-1 language code such as "en"', type: 'value_error' });
    }
    if (name === 'response_format') {
      if (RESPONSE_FORMATS.has(value)) responseFormat = value;
      else issues.push({ loc: ['body', 'response_format'], msg: "Input should be 'json', 'text', 'verbose_json', 'srt' or 'vtt'", type: 'enum' });
    }
    if (name === 'stream') {
      if (value === 'true' || value === 'false') stream = value === 'true';
      else issues.push({ loc: ['body', 'stream'], msg: 'Input should be a valid boolean', type: 'bool_parsing' });
    }
    if (name === 'temperature') {
      const temperature = value.trim() === '' ? Number.NaN : Number(value);
      if (!(temperature >= 0 && temperature <= 1)) {
        issues.push({ loc: ['body', 'temperature'], msg: 'Input should be a number from 0 to 1', type: 'value_error' });
      }
    }
    passthrough.push([name, value]);
  }
  if (issues.length > 0) throw validationError(issues);
  if (stream && task === 'translate') {
    throw new GatewayError('invalid_body', 'Translations do not stream: send the request without stream.', { param: 'stream' });
  }
  if (stream && !STREAMABLE_FORMATS.has(responseFormat)) {
    throw new GatewayError(
      'invalid_body',
      `A streamed transcript comes as text events, which response_format '${responseFormat}' has no form of: send stream=false, or response_format json or text.`,
      { param: 'stream' },
    );
  }
  return { model, stream, passthrough };
}
