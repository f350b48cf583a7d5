import { describe, expect, it } from 'vitest';
import { LocalEngineError } from '../local-engine-error.js';
import { FLITE_VOICES, LOCAL_DEFAULT_VOICE, LOCAL_VOICE_NAMES, OPENAI_VOICE_TO_FLITE, resolveFliteVoice } from './voices.js';

const OPENAI_VOICES = ['alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer', 'verse'];

describe('voices', () => {
  it('maps every OpenAI voice to a Flite voice and uses all four', () => {
    expect(Object.keys(OPENAI_VOICE_TO_FLITE).sort()).toEqual([...OPENAI_VOICES].sort());
    for (const voice of OPENAI_VOICES) expect(FLITE_VOICES).toContain(resolveFliteVoice(voice));
    expect(new Set(Object.values(OPENAI_VOICE_TO_FLITE))).toEqual(new Set(FLITE_VOICES));
  });

  it('accepts Flite names and ignores case and surrounding spaces', () => {
    for (const voice of FLITE_VOICES) expect(resolveFliteVoice(voice)).toBe(voice);
    expect(resolveFliteVoice(' Shimmer ')).toBe('slt');
    expect(resolveFliteVoice('KAL16')).toBe('kal16');
  });

  it('has a default that resolves', () => {
    expect(LOCAL_VOICE_NAMES).toContain(LOCAL_DEFAULT_VOICE);
    expect(FLITE_VOICES).toContain(resolveFliteVoice(LOCAL_DEFAULT_VOICE));
  });

  it.each(['marvin', 'kal', 'constructor', '__proto__', ''])('rejects %j', (voice) => {
    expect(() => resolveFliteVoice(voice)).toThrow(LocalEngineError);
    expect(() => resolveFliteVoice(voice)).toThrow(`voice '${voice}' is not available; choose one of alloy, ash,`);
  });
});
