import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { encodeFlac, encodeWave, splitMp3Frames } from '../../../../test/support/audio/test-audio-files.js';
import { encodeM4aWithMp3, encodeOggFlac, encodeWebmWithMp3 } from '../../../../test/support/audio/test-containers.js';
import { silence, synthesizePaddedSpeech, synthesizeTestSpeech, type PcmAudio } from '../../../../test/support/audio/test-speech.js';
import { concatenateInt16, float32ToInt16, int16ToFloat32 } from '../audio/pcm-samples.js';
import { resampleAudio } from '../audio/resample-audio.js';
import { LocalEngineError } from '../local-engine-error.js';
import { encodeMp3 } from '../speech/encode-mp3.js';
import { findPocketsphinx, transcribeAudio, type TranscriptionOutcome } from './transcribe-audio.js';
import { wordErrorRate } from '../../../../test/support/word-error-rate.js';

const installation = findPocketsphinx();
if (installation === null) {
  console.warn('skipped: pocketsphinx transcription tests (install the Debian packages pocketsphinx and pocketsphinx-en-us)');
}

const FORMAT_SENTENCE = 'i would like to book a table for two people tonight';

let workDirectory: string;
let inputDirectory: string;
beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'transcription-work-'));
  inputDirectory = await mkdtemp(join(tmpdir(), 'transcription-input-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
  await rm(inputDirectory, { recursive: true, force: true });
});

async function transcribeBytes(bytes: Uint8Array, name: string, signal?: AbortSignal): Promise<TranscriptionOutcome> {
  const filePath = join(inputDirectory, name);
  await writeFile(filePath, bytes);
  return transcribeAudio({ filePath, workDirectory }, signal);
}

function resampled(audio: PcmAudio, targetRate: number): Int16Array {
  return float32ToInt16(resampleAudio(int16ToFloat32(audio.samples), audio.sampleRate, targetRate));
}

describe('transcribeAudio: language', () => {
  it('refuses a non-English language before touching the file', async () => {
    const failure = await transcribeAudio({ filePath: '/nonexistent.wav', language: 'fr', workDirectory: '/nonexistent' }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(LocalEngineError);
    expect(failure).toMatchObject({ kind: 'invalid_request' });
    expect((failure as Error).message).toContain("English only (language 'fr'");
  });
});

describe.skipIf(installation === null)('transcribeAudio with pocketsphinx', () => {
  let formatSpeech: PcmAudio;
  beforeAll(async () => {
    formatSpeech = await synthesizePaddedSpeech(FORMAT_SENTENCE, 'rms');
  });

  afterEach(async () => {
    // Every call must remove its temporary WAV, whatever happened.
    expect(await readdir(workDirectory)).toEqual([]);
  });

  const formats: Array<[string, (audio: PcmAudio) => Uint8Array]> = [
    [
      'WAV 48 kHz stereo',
      (audio) => {
        const left = resampled(audio, 48_000);
        return encodeWave([left, Int16Array.from(left, (sample) => sample >> 1)], 48_000);
      },
    ],
    ['MP3 44.1 kHz', (audio) => encodeMp3(resampled(audio, 44_100), 44_100, 96).bytes],
    ['FLAC 16 kHz', (audio) => encodeFlac(audio.samples, audio.sampleRate)],
    ['Ogg FLAC 48 kHz', (audio) => encodeOggFlac(resampled(audio, 48_000), 48_000)],
    ['M4A (MP3 track) 16 kHz', (audio) => encodeM4aWithMp3(splitMp3Frames(encodeMp3(audio.samples, audio.sampleRate).bytes))],
    ['WebM (MP3 track) 16 kHz', (audio) => encodeWebmWithMp3(splitMp3Frames(encodeMp3(audio.samples, audio.sampleRate).bytes))],
  ];
  // Plain 16 kHz WAV is covered by transcription-accuracy.test.ts.
  it.each(formats)('transcribes %s', async (_name, encode) => {
    const outcome = await transcribeBytes(encode(formatSpeech), 'upload.bin');
    expect(wordErrorRate(FORMAT_SENTENCE, outcome.text).rate).toBeLessThanOrEqual(0.2);
    expect(outcome.durationSeconds).toBeGreaterThan(formatSpeech.samples.length / formatSpeech.sampleRate - 0.01);
  });

  it('splits segments at pauses and keeps absolute word timings', async () => {
    const first = await synthesizeTestSpeech('the weather will be sunny tomorrow', 'rms');
    const second = await synthesizeTestSpeech('we need to buy milk and bread', 'rms');
    const rate = first.sampleRate;
    const samples = concatenateInt16([silence(1, rate), first.samples, silence(2, rate), second.samples, silence(0.5, rate)]);
    const outcome = await transcribeBytes(encodeWave([samples], rate), 'two-sentences.wav');

    expect(outcome.segments).toHaveLength(2);
    const [opening, closing] = outcome.segments;
    const secondStarts = 1 + first.samples.length / rate + 2;
    expect(opening?.start).toBeGreaterThanOrEqual(0.9);
    expect(closing?.start).toBeGreaterThan(secondStarts - 0.3);
    expect(closing?.end).toBeLessThanOrEqual(outcome.durationSeconds);
    expect(wordErrorRate('the weather will be sunny tomorrow', opening?.text ?? '').rate).toBeLessThanOrEqual(0.2);
    expect(wordErrorRate('we need to buy milk and bread', closing?.text ?? '').rate).toBeLessThanOrEqual(0.3);
    expect(outcome.text).toBe(`${opening?.text} ${closing?.text}`);
    expect(outcome.words.map((word) => word.word).join(' ')).toBe(outcome.text);
    for (const [index, word] of outcome.words.entries()) {
      expect(word.end).toBeGreaterThan(word.start);
      expect(word.start).toBeGreaterThanOrEqual(outcome.words[index - 1]?.end ?? 0);
    }
  });

  it('returns an empty transcription for silence', async () => {
    const outcome = await transcribeBytes(encodeWave([silence(2, 16_000)], 16_000), 'silence.wav');
    expect(outcome).toEqual({ text: '', language: 'english', durationSeconds: 2, segments: [], words: [] });
  });

  it('refuses bytes that are not audio as an invalid request', async () => {
    const failure = await transcribeBytes(Buffer.from('definitely not audio'), 'notes.mp3').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(LocalEngineError);
    expect(failure).toMatchObject({ kind: 'invalid_request', message: 'the audio file could not be decoded' });
  });

  it('kills the recogniser and removes the temporary file when the signal aborts', async () => {
    const speech = await synthesizeTestSpeech('the quick brown fox jumps over the lazy dog and then we need to buy milk bread and eggs on the way home', 'rms');
    const long = concatenateInt16([speech.samples, speech.samples, speech.samples]);
    const controller = new AbortController();
    const pending = transcribeBytes(encodeWave([long], speech.sampleRate), 'long.wav', controller.signal);
    // Abort once the recogniser process is running on this call's input.
    const deadline = performance.now() + 5000;
    while ((await recognizerProcessesReading(workDirectory)).length === 0 && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(await recognizerProcessesReading(workDirectory)).toHaveLength(1);
    const abortedAt = performance.now();
    controller.abort();
    const failure = await pending.catch((error: unknown) => error);
    expect(failure).toMatchObject({ name: 'AbortError' });
    expect(performance.now() - abortedAt).toBeLessThan(1000);
    expect(await recognizerProcessesReading(workDirectory)).toEqual([]);
  });
});

/** Process ids whose command line mentions `directory` (Linux /proc). */
async function recognizerProcessesReading(directory: string): Promise<string[]> {
  const matches: string[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const commandLine = await readFile(join('/proc', entry, 'cmdline'), 'utf8').catch(() => '');
    if (commandLine.includes(directory)) matches.push(entry);
  }
  return matches;
}
