import { randomUUID } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { float32ToInt16 } from '../audio/pcm-samples.js';
import { downmixToMono, resampleAudio } from '../audio/resample-audio.js';
import { encodeWavPcm16 } from '../audio/wav-file.js';
import { LocalEngineError } from '../local-engine-error.js';
import { decodeAudio } from './decode-audio.js';
import { findPocketsphinx } from './find-pocketsphinx.js';
import { groupIntoSegments, type TranscriptionSegment } from './group-segments.js';
import { parsePocketsphinxOutput } from './pocketsphinx-output.js';
import { requireEnglish } from './require-english.js';
import { RECOGNIZER_SAMPLE_RATE, runPocketsphinx } from './run-pocketsphinx.js';

export { findPocketsphinx, type PocketsphinxInstallation } from './find-pocketsphinx.js';
export type { TranscriptionSegment } from './group-segments.js';

export interface TranscriptionRequest {
  /** The uploaded audio, any format decodeAudio() knows; the format is sniffed from the bytes. */
  filePath: string;
  /** ISO-639-1 code; only English (or omitted) is accepted. */
  language?: string;
  /** A directory this call may write its temporary 16 kHz WAV into; the file is always removed. */
  workDirectory: string;
}

export interface TranscriptionOutcome {
  /** Lower-case words separated by spaces: pocketsphinx produces neither case nor punctuation. */
  text: string;
  language: 'english';
  durationSeconds: number;
  segments: TranscriptionSegment[];
  words: Array<{ word: string; start: number; end: number }>;
}

/** Speech to text with pocketsphinx (US English), entirely on this machine. */
export async function transcribeAudio(request: TranscriptionRequest, signal?: AbortSignal): Promise<TranscriptionOutcome> {
  requireEnglish(request.language);
  const installation = findPocketsphinx();
  if (installation === null) {
    throw new LocalEngineError('engine_failed', 'local speech recognition is not installed (Debian packages pocketsphinx and pocketsphinx-en-us)');
  }
  signal?.throwIfAborted();

  const bytes = await readUpload(request.filePath);
  const decoded = await decodeAudio(bytes);
  signal?.throwIfAborted();
  const mono = downmixToMono(decoded.channels);
  const durationSeconds = mono.length / decoded.sampleRate;
  // AIFF and CAF store the rate as a float that may carry a fraction (old Macs' 22254.55 Hz); the
  // resampler takes whole hertz, and rounding is off by 20 ppm at most, far under what a recogniser notices.
  const samples = float32ToInt16(resampleAudio(mono, Math.round(decoded.sampleRate), RECOGNIZER_SAMPLE_RATE));

  // pocketsphinx only strips a WAV header when the name ends in ".wav".
  const wavePath = join(request.workDirectory, `transcription-${randomUUID()}.wav`);
  try {
    await writeFile(wavePath, encodeWavPcm16(samples, RECOGNIZER_SAMPLE_RATE)).catch(() => {
      throw new LocalEngineError('engine_failed', 'the temporary audio file for the speech recognizer could not be written');
    });
    const output = await runPocketsphinx(installation, wavePath, signal);
    const words = parsePocketsphinxOutput(output);
    const segments = groupIntoSegments(words);
    return {
      text: segments.map((segment) => segment.text).join(' '),
      language: 'english',
      durationSeconds,
      segments,
      words,
    };
  } finally {
    await rm(wavePath, { force: true });
  }
}

async function readUpload(filePath: string): Promise<Uint8Array> {
  try {
    return await readFile(filePath);
  } catch {
    throw new LocalEngineError('engine_failed', 'the uploaded audio file could not be read');
  }
}
