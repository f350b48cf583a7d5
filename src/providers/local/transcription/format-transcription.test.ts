import { describe, expect, it } from 'vitest';
import { LocalEngineError } from '../local-engine-error.js';
import { formatTranscription } from './format-transcription.js';
import type { TranscriptionOutcome } from './transcribe-audio.js';

const outcome: TranscriptionOutcome = {
  text: 'hello world how are you',
  language: 'english',
  durationSeconds: 3725.25,
  segments: [
    { start: 1.5, end: 2.25, text: 'hello world' },
    { start: 3723.0101, end: 3725.0, text: 'how are you' },
  ],
  words: [
    { word: 'hello', start: 1.5, end: 1.9 },
    { word: 'world', start: 1.91, end: 2.25 },
    { word: 'how', start: 3723.0101, end: 3723.4 },
    { word: 'are', start: 3723.41, end: 3723.7 },
    { word: 'you', start: 3723.71, end: 3725.0 },
  ],
};

describe('formatTranscription', () => {
  it('json is just the text', () => {
    const formatted = formatTranscription(outcome, 'json');
    expect(formatted.contentType).toBe('application/json');
    expect(JSON.parse(formatted.body)).toEqual({ text: 'hello world how are you' });
  });

  it('text is the plain text with a trailing newline', () => {
    expect(formatTranscription(outcome, 'text')).toEqual({
      contentType: 'text/plain; charset=utf-8',
      body: 'hello world how are you\n',
    });
  });

  it('srt numbers cues from 1 and uses a comma before the milliseconds', () => {
    const formatted = formatTranscription(outcome, 'srt');
    expect(formatted.contentType).toBe('text/plain; charset=utf-8');
    expect(formatted.body).toBe('1\n00:00:01,500 --> 00:00:02,250\nhello world\n\n' + '2\n01:02:03,010 --> 01:02:05,000\nhow are you\n');
  });

  it('vtt starts with the WEBVTT header and uses a dot before the milliseconds', () => {
    const formatted = formatTranscription(outcome, 'vtt');
    expect(formatted.contentType).toBe('text/plain; charset=utf-8');
    expect(formatted.body).toBe('WEBVTT\n\n' + '00:00:01.500 --> 00:00:02.250\nhello world\n\n' + '01:02:03.010 --> 01:02:05.000\nhow are you\n');
  });

  it("verbose_json has OpenAI's fields, with segments by default and no words", () => {
    const formatted = formatTranscription(outcome, 'verbose_json');
    expect(formatted.contentType).toBe('application/json');
    const body = JSON.parse(formatted.body) as Record<string, unknown>;
    expect(body).toMatchObject({ task: 'transcribe', language: 'english', duration: 3725.25, text: 'hello world how are you' });
    expect(body.usage).toEqual({ type: 'duration', seconds: 3726 });
    expect(body).not.toHaveProperty('words');
    const segments = body.segments as Array<Record<string, unknown>>;
    expect(segments).toHaveLength(2);
    expect(Object.keys(segments[0] ?? {}).sort()).toEqual(
      ['avg_logprob', 'compression_ratio', 'end', 'id', 'no_speech_prob', 'seek', 'start', 'temperature', 'text', 'tokens'].sort(),
    );
    expect(segments[1]).toMatchObject({ id: 1, seek: 0, start: 3723.0101, end: 3725, text: ' how are you', tokens: [], temperature: 0 });
    expect(segments[1]?.compression_ratio).toBeGreaterThan(0);
  });

  it('verbose_json adds words when asked, and drops segments when only words are asked for', () => {
    const both = JSON.parse(formatTranscription(outcome, 'verbose_json', { timestampGranularities: ['word', 'segment'] }).body) as Record<string, unknown>;
    expect(both.words).toEqual(outcome.words);
    expect(both.segments).toHaveLength(2);
    const wordsOnly = JSON.parse(formatTranscription(outcome, 'verbose_json', { timestampGranularities: ['word'] }).body) as Record<string, unknown>;
    expect(wordsOnly.words).toHaveLength(5);
    expect(wordsOnly).not.toHaveProperty('segments');
  });

  it('an empty transcription gives empty subtitles, not an error', () => {
    const empty: TranscriptionOutcome = { text: '', language: 'english', durationSeconds: 2, segments: [], words: [] };
    expect(formatTranscription(empty, 'srt').body).toBe('');
    expect(formatTranscription(empty, 'vtt').body).toBe('WEBVTT\n\n');
    expect(formatTranscription(empty, 'text').body).toBe('\n');
    expect(JSON.parse(formatTranscription(empty, 'verbose_json').body)).toMatchObject({ text: '', segments: [] });
  });

  it('refuses an unknown response_format as an invalid request', () => {
    const attempt = (): unknown => formatTranscription(outcome, 'xml');
    expect(attempt).toThrow(LocalEngineError);
    expect(attempt).toThrow("response_format 'xml' is not supported; use one of json, text, srt, verbose_json, vtt");
    try {
      attempt();
    } catch (error) {
      expect((error as LocalEngineError).kind).toBe('invalid_request');
    }
  });
});
