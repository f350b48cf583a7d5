// Test support only: real speech for the audio tests, spoken offline by the speech engine's own Flite
// runner (its in-memory WASI host; node:wasi could crash the whole process on multi-sentence text).
import { concatenateInt16 } from '../../../src/providers/local/audio/pcm-samples.js';
import { synthesizeWithFlite, type FliteAudio } from '../../../src/providers/local/speech/flite-engine.js';
import type { FliteVoice } from '../../../src/providers/local/speech/voices.js';

export type { FliteVoice };

/** Mono 16-bit samples and their rate (every Flite voice speaks at 16 kHz). */
export type PcmAudio = FliteAudio;

/** Speak `text` with Flite at the voice's natural pace. */
export function synthesizeTestSpeech(text: string, voice: FliteVoice = 'slt'): Promise<PcmAudio> {
  return synthesizeWithFlite(text, { voice, durationStretch: 1 });
}

/** Flite speech with 0.3 s of silence either side, as a recording would have. */
export async function synthesizePaddedSpeech(text: string, voice: FliteVoice = 'slt'): Promise<PcmAudio> {
  const speech = await synthesizeTestSpeech(text, voice);
  const pad = silence(0.3, speech.sampleRate);
  return { samples: concatenateInt16([pad, speech.samples, pad]), sampleRate: speech.sampleRate };
}

/** Silence (digital zero) of the given length, to pad or join utterances. */
export function silence(seconds: number, sampleRate: number): Int16Array {
  return new Int16Array(Math.round(seconds * sampleRate));
}
