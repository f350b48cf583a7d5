import { deflateSync } from 'node:zlib';
import { LocalEngineError } from '../local-engine-error.js';
import type { TranscriptionOutcome } from './transcribe-audio.js';

export interface FormattedTranscription {
  contentType: string;
  body: string;
}

export interface TranscriptionFormatOptions {
  /** OpenAI's `timestamp_granularities[]`: 'segment' (the default) and/or 'word'; verbose_json only. */
  timestampGranularities?: readonly string[];
}

const JSON_TYPE = 'application/json';
// OpenAI answers text, srt and vtt all as text/plain.
const TEXT_TYPE = 'text/plain; charset=utf-8';
const RESPONSE_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt'] as const;

/** Render a transcription in one of OpenAI's five `response_format`s. */
export function formatTranscription(outcome: TranscriptionOutcome, responseFormat: string, options: TranscriptionFormatOptions = {}): FormattedTranscription {
  switch (responseFormat) {
    case 'json':
      return { contentType: JSON_TYPE, body: JSON.stringify({ text: outcome.text }) };
    case 'text':
      return { contentType: TEXT_TYPE, body: `${outcome.text}\n` };
    case 'verbose_json':
      return { contentType: JSON_TYPE, body: JSON.stringify(verboseJson(outcome, options.timestampGranularities)) };
    case 'srt':
      return { contentType: TEXT_TYPE, body: subRip(outcome) };
    case 'vtt':
      return { contentType: TEXT_TYPE, body: webVtt(outcome) };
    default: {
      const shown = /^[\w.-]{1,40}$/.test(responseFormat) ? `'${responseFormat}' ` : '';
      throw new LocalEngineError('invalid_request', `response_format ${shown}is not supported; use one of ${RESPONSE_FORMATS.join(', ')}`);
    }
  }
}

/**
 * OpenAI's verbose_json. Fields only Whisper can know get neutral values: `seek` 0 (no 30 s decoding
 * windows), `tokens` [] (no Whisper token ids), `temperature` 0 (no sampling), `avg_logprob` 0 and
 * `no_speech_prob` 0 (every segment holds recognised words). `compression_ratio` is computed from the
 * text the way Whisper does (bytes / deflated bytes).
 */
function verboseJson(outcome: TranscriptionOutcome, granularities: readonly string[] = ['segment']): object {
  const body: Record<string, unknown> = {
    task: 'transcribe',
    language: outcome.language,
    duration: outcome.durationSeconds,
    text: outcome.text,
  };
  if (granularities.includes('word')) body.words = outcome.words.map(({ word, start, end }) => ({ word, start, end }));
  if (granularities.includes('segment') || !granularities.includes('word')) {
    body.segments = outcome.segments.map((segment, id) => ({
      id,
      seek: 0,
      start: segment.start,
      end: segment.end,
      // Whisper segment texts start with a space, so clients that concatenate them get spaced words.
      text: ` ${segment.text}`,
      tokens: [],
      temperature: 0,
      avg_logprob: 0,
      compression_ratio: compressionRatio(segment.text),
      no_speech_prob: 0,
    }));
  }
  body.usage = { type: 'duration', seconds: Math.ceil(outcome.durationSeconds) };
  return body;
}

function compressionRatio(text: string): number {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length === 0) return 0;
  return bytes.length / deflateSync(bytes).length;
}

function subRip(outcome: TranscriptionOutcome): string {
  return outcome.segments
    .map((segment, index) => `${index + 1}\n${timestamp(segment.start, ',')} --> ${timestamp(segment.end, ',')}\n${segment.text}\n`)
    .join('\n');
}

function webVtt(outcome: TranscriptionOutcome): string {
  const cues = outcome.segments.map((segment) => `${timestamp(segment.start, '.')} --> ${timestamp(segment.end, '.')}\n${segment.text}\n`);
  return `WEBVTT\n\n${cues.join('\n')}`;
}

/** HH:MM:SS,mmm (SubRip) or HH:MM:SS.mmm (WebVTT); hours grow past two digits rather than wrap. */
function timestamp(seconds: number, millisecondSeparator: ',' | '.'): string {
  const totalMilliseconds = Math.max(0, Math.round(seconds * 1000));
  const hours = Math.floor(totalMilliseconds / 3_600_000);
  const minutes = Math.floor(totalMilliseconds / 60_000) % 60;
  const wholeSeconds = Math.floor(totalMilliseconds / 1000) % 60;
  const milliseconds = totalMilliseconds % 1000;
  const pad = (value: number, width: number): string => String(value).padStart(width, '0');
  return `${pad(hours, 2)}:${pad(minutes, 2)}:${pad(wholeSeconds, 2)}${millisecondSeparator}${pad(milliseconds, 3)}`;
}
