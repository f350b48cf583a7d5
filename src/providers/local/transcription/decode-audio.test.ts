import { beforeAll, describe, expect, it } from 'vitest';
import { encodeFlac, encodeWave, splitMp3Frames } from '../../../../test/support/audio/test-audio-files.js';
import {
  encodeM4aWithMp3,
  encodeOggFlac,
  encodeSilentOggOpus,
  encodeSilentWebmOpus,
  encodeWebmWithMp3,
} from '../../../../test/support/audio/test-containers.js';
import { synthesizeTestSpeech, type PcmAudio } from '../../../../test/support/audio/test-speech.js';
import { LocalEngineError } from '../local-engine-error.js';
import { encodeMp3 } from '../speech/encode-mp3.js';
import { decodeAudio, type DecodedAudio } from './decode-audio.js';

let speech: PcmAudio;
beforeAll(async () => {
  speech = await synthesizeTestSpeech('the quick brown fox jumps over the lazy dog', 'rms');
});

function durationOf(decoded: DecodedAudio): number {
  return (decoded.channels[0]?.length ?? 0) / decoded.sampleRate;
}

/** Largest difference from the original 16-bit samples, in 16-bit steps. */
function largestDifference(decoded: DecodedAudio, original: Int16Array): number {
  const channel = decoded.channels[0] ?? new Float32Array(0);
  let largest = channel.length === original.length ? 0 : Infinity;
  for (let index = 0; index < channel.length; index += 1) {
    largest = Math.max(largest, Math.abs((channel[index] ?? 0) * 32768 - (original[index] ?? 0)));
  }
  return largest;
}

/** Normalised correlation over the first second with the original, at the best lag up to `maxLag`. */
function bestCorrelation(decoded: DecodedAudio, original: Int16Array, maxLag: number): number {
  const channel = decoded.channels[0] ?? new Float32Array(0);
  let best = 0;
  for (let lag = 0; lag <= maxLag; lag += 1) {
    let product = 0;
    let decodedEnergy = 0;
    let originalEnergy = 0;
    for (let index = 0; index + lag < channel.length && index < original.length && index < 16_000; index += 1) {
      const value = channel[index + lag] ?? 0;
      const reference = (original[index] ?? 0) / 32768;
      product += value * reference;
      decodedEnergy += value * value;
      originalEnergy += reference * reference;
    }
    best = Math.max(best, product / Math.sqrt(decodedEnergy * originalEnergy || 1));
  }
  return best;
}

describe('decodeAudio: lossless formats give back the exact samples', () => {
  it.each([
    ['WAV', (): Uint8Array => encodeWave([speech.samples], speech.sampleRate)],
    ['FLAC', (): Uint8Array => encodeFlac(speech.samples, speech.sampleRate)],
    ['Ogg FLAC', (): Uint8Array => encodeOggFlac(speech.samples, speech.sampleRate)],
  ])('%s', async (_name, encode) => {
    const decoded = await decodeAudio(encode());
    expect(decoded.sampleRate).toBe(16_000);
    expect(decoded.channels).toHaveLength(1);
    expect(largestDifference(decoded, speech.samples)).toBeLessThanOrEqual(1);
  });

  it('keeps both channels of a stereo WAV', async () => {
    const quieter = Int16Array.from(speech.samples, (sample) => sample >> 1);
    const decoded = await decodeAudio(encodeWave([speech.samples, quieter], speech.sampleRate));
    expect(decoded.channels).toHaveLength(2);
    expect(durationOf(decoded)).toBeCloseTo(speech.samples.length / speech.sampleRate, 3);
  });
});

describe('decodeAudio: MP3 in its own stream, in M4A and in WebM', () => {
  it.each([
    ['MP3', (mp3: Uint8Array): Uint8Array => mp3],
    ['M4A (MP3 track)', (mp3: Uint8Array): Uint8Array => encodeM4aWithMp3(splitMp3Frames(mp3))],
    ['WebM (MP3 track)', (mp3: Uint8Array): Uint8Array => encodeWebmWithMp3(splitMp3Frames(mp3))],
  ])('%s', async (_name, wrap) => {
    const decoded = await decodeAudio(wrap(encodeMp3(speech.samples, speech.sampleRate).bytes));
    expect(decoded.sampleRate).toBe(16_000);
    // MP3 adds encoder delay and padding up to a frame or two.
    expect(durationOf(decoded)).toBeGreaterThanOrEqual(speech.samples.length / speech.sampleRate);
    expect(durationOf(decoded)).toBeLessThan(speech.samples.length / speech.sampleRate + 0.2);
    expect(bestCorrelation(decoded, speech.samples, 1600)).toBeGreaterThan(0.9);
  });
});

describe('decodeAudio: Opus (libopus WebAssembly) in Ogg and WebM', () => {
  // No Opus encoder exists offline; silent packets still prove the container and codec paths run.
  it.each([
    ['Ogg Opus', (): Uint8Array => encodeSilentOggOpus(2)],
    ['WebM Opus', (): Uint8Array => encodeSilentWebmOpus(2)],
  ])('%s', async (_name, encode) => {
    const decoded = await decodeAudio(encode());
    expect(decoded.sampleRate).toBe(48_000);
    expect(durationOf(decoded)).toBeGreaterThan(1.9);
    expect(durationOf(decoded)).toBeLessThanOrEqual(2.0);
    expect(Math.max(...(decoded.channels[0] ?? []).map(Math.abs))).toBeLessThan(0.001);
  });
});

describe('decodeAudio: bytes that are not audio', () => {
  const expectUndecodable = async (bytes: Uint8Array): Promise<void> => {
    const failure = await decodeAudio(bytes).then(
      () => null,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(LocalEngineError);
    expect(failure).toMatchObject({ kind: 'invalid_request', message: 'the audio file could not be decoded' });
  };

  it('refuses text, random bytes and an empty file', async () => {
    await expectUndecodable(Buffer.from('this is a text file, not a recording\n'));
    await expectUndecodable(Uint8Array.from({ length: 4096 }, (_, index) => (index * 7919 + 13) % 251));
    await expectUndecodable(new Uint8Array(0));
  });

  it('refuses a WAV header with no samples behind it', async () => {
    await expectUndecodable(encodeWave([new Int16Array(0)], 16_000));
  });

  it('refuses a WAV header that claims an impossible sample rate', async () => {
    await expectUndecodable(encodeWave([new Int16Array(1600)], 2_000_000_000));
    await expectUndecodable(encodeWave([new Int16Array(1600)], 10));
  });
});
