import { Mp3Encoder } from '@breezystack/lamejs';
import { float32ToInt16, int16ToFloat32 } from '../audio/pcm-samples.js';
import { resampleAudio } from '../audio/resample-audio.js';

/** 64 kbps is transparent enough for 16 kHz mono speech and is valid for MPEG-1, 2 and 2.5. */
const MP3_BITRATE_KBPS = 64;
/** MPEG-1 (32/44.1/48 kHz), MPEG-2 (16/22.05/24 kHz) and MPEG-2.5 (8/11.025/12 kHz) rates. */
const MP3_SAMPLE_RATES: readonly number[] = [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000];
/** A multiple of the 1152-sample MPEG-1 frame (and of the 576-sample MPEG-2 one). */
const ENCODE_BLOCK_SAMPLES = 1152 * 32;

export interface Mp3Audio {
  bytes: Uint8Array;
  sampleRate: number;
}

/**
 * Mono MP3 at a constant bitrate (64 kbps unless told otherwise). lamejs cannot resample, so a rate
 * MP3 has no header value for is first brought to the nearest rate that it has.
 */
export function encodeMp3(samples: Int16Array, sampleRate: number, kilobitsPerSecond = MP3_BITRATE_KBPS): Mp3Audio {
  const mp3Rate = nearestMp3SampleRate(sampleRate);
  const input = mp3Rate === sampleRate ? samples : float32ToInt16(resampleAudio(int16ToFloat32(samples), sampleRate, mp3Rate));
  const encoder = new Mp3Encoder(1, mp3Rate, kilobitsPerSecond);
  const parts: Uint8Array[] = [];
  for (let offset = 0; offset < input.length; offset += ENCODE_BLOCK_SAMPLES) {
    parts.push(encoder.encodeBuffer(input.subarray(offset, offset + ENCODE_BLOCK_SAMPLES)));
  }
  parts.push(encoder.flush());
  const bytes = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    bytes.set(part, offset);
    offset += part.length;
  }
  return { bytes, sampleRate: mp3Rate };
}

function nearestMp3SampleRate(sampleRate: number): number {
  if (MP3_SAMPLE_RATES.includes(sampleRate)) return sampleRate;
  // Prefer going up, so no part of the spectrum is lost; fall back to the highest rate MP3 has.
  return MP3_SAMPLE_RATES.find((rate) => rate > sampleRate) ?? 48000;
}
