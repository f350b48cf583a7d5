import { concatenateInt16, float32ToInt16, int16ToFloat32, int16ToLittleEndianBytes } from '../audio/pcm-samples.js';
import { resampleAudio } from '../audio/resample-audio.js';
import { encodeWavPcm16 } from '../audio/wav-file.js';
import { LocalEngineError } from '../local-engine-error.js';
import { encodeMp3 } from './encode-mp3.js';
import { synthesizeWithFlite, type FliteAudio } from './flite-engine.js';
import { normalizeSpeechText } from './normalize-speech-text.js';
import { splitSpeechText } from './split-speech-text.js';
import { resolveFliteVoice } from './voices.js';

export { LOCAL_DEFAULT_VOICE, LOCAL_VOICE_NAMES, OPENAI_VOICE_TO_FLITE } from './voices.js';

export type LocalSpeechFormat = 'mp3' | 'wav' | 'pcm';

export const LOCAL_SPEECH_FORMATS: readonly LocalSpeechFormat[] = ['mp3', 'wav', 'pcm'];

export interface SpeechSynthesisRequest {
  text: string;
  /** An OpenAI voice name (alloy, echo, …) or a Flite one (slt, rms, awb, kal16). */
  voice: string;
  /** 0.25–4, 1 being the voice's natural pace. */
  speed: number;
  format: string;
}

export interface SpeechSynthesisResult {
  audio: Uint8Array;
  contentType: string;
  /** The rate of the returned audio: Flite's own for mp3/wav, 24 kHz for pcm. */
  sampleRate: number;
  durationSeconds: number;
}

/** OpenAI's `pcm` response format is headerless 16-bit mono at 24 kHz; clients assume that rate. */
const PCM_SAMPLE_RATE = 24_000;
const MIN_SPEED = 0.25;
const MAX_SPEED = 4;

const CONTENT_TYPES: Readonly<Record<LocalSpeechFormat, string>> = {
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

/** Speaks `request.text` with Flite and encodes it in the requested format. */
export async function synthesizeSpeech(request: SpeechSynthesisRequest): Promise<SpeechSynthesisResult> {
  const format = parseFormat(request.format);
  const voice = resolveFliteVoice(request.voice);
  if (!Number.isFinite(request.speed) || request.speed < MIN_SPEED || request.speed > MAX_SPEED) {
    throw new LocalEngineError('invalid_request', `speed must be between ${MIN_SPEED} and ${MAX_SPEED}`);
  }
  const chunks = splitSpeechText(normalizeSpeechText(request.text));
  if (chunks.length === 0) throw new LocalEngineError('invalid_request', 'input text is empty');

  // Chunks run one after another: the caller's worker pool is what spreads work over cores.
  const parts: FliteAudio[] = [];
  for (const chunk of chunks) {
    parts.push(await synthesizeWithFlite(chunk, { voice, durationStretch: 1 / request.speed }));
  }
  const sampleRate = parts[0]?.sampleRate ?? 0;
  if (parts.some((part) => part.sampleRate !== sampleRate)) {
    throw new LocalEngineError('engine_failed', 'the Flite speech engine changed sample rate mid-text');
  }
  return encodeSpeech(concatenateInt16(parts.map((part) => part.samples)), sampleRate, format);
}

function parseFormat(format: string): LocalSpeechFormat {
  const found = LOCAL_SPEECH_FORMATS.find((candidate) => candidate === format);
  if (found === undefined) {
    throw new LocalEngineError('invalid_request', `response_format '${format}' is not supported by local speech; use mp3, wav or pcm`);
  }
  return found;
}

function encodeSpeech(samples: Int16Array, sampleRate: number, format: LocalSpeechFormat): SpeechSynthesisResult {
  const contentType = CONTENT_TYPES[format];
  const durationSeconds = samples.length / sampleRate;
  switch (format) {
    case 'wav':
      return { audio: encodeWavPcm16(samples, sampleRate), contentType, sampleRate, durationSeconds };
    case 'mp3': {
      const mp3 = encodeMp3(samples, sampleRate);
      return { audio: mp3.bytes, contentType, sampleRate: mp3.sampleRate, durationSeconds };
    }
    case 'pcm': {
      const resampled = float32ToInt16(resampleAudio(int16ToFloat32(samples), sampleRate, PCM_SAMPLE_RATE));
      return {
        audio: int16ToLittleEndianBytes(resampled),
        contentType,
        sampleRate: PCM_SAMPLE_RATE,
        durationSeconds: resampled.length / PCM_SAMPLE_RATE,
      };
    }
  }
}
