import { describe, expect, it } from 'vitest';
import { loadFliteModule, synthesizeWithFlite } from './flite-engine.js';

describe('synthesizeWithFlite', () => {
  it('compiles the module once per thread', async () => {
    expect(loadFliteModule()).toBe(loadFliteModule());
    expect(await loadFliteModule()).toBe(await loadFliteModule());
  });

  it('speaks each of the four voices at 16 kHz', async () => {
    for (const voice of ['slt', 'rms', 'awb', 'kal16'] as const) {
      const audio = await synthesizeWithFlite('Hello there.', { voice, durationStretch: 1 });
      expect(audio.sampleRate).toBe(16_000);
      expect(audio.samples.length).toBeGreaterThan(8_000);
    }
  });

  it('keeps every utterance when one run speaks several sentences', async () => {
    // Flite writes the first utterance and appends the rest to its output file, rewriting the header.
    const sentence = 'The rain in Spain stays mainly in the plain.';
    const once = await synthesizeWithFlite(sentence, { voice: 'slt', durationStretch: 1 });
    const thrice = await synthesizeWithFlite(`${sentence} ${sentence} ${sentence}`, { voice: 'slt', durationStretch: 1 });
    expect(thrice.samples.length / once.samples.length).toBeGreaterThan(2.7);
    expect(thrice.samples.length / once.samples.length).toBeLessThan(3.3);
  });
});
