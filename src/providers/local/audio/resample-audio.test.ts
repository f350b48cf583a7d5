import { describe, expect, it } from 'vitest';
import { downmixToMono, resampleAudio } from './resample-audio.js';

function sine(frequency: number, sampleRate: number, seconds: number, amplitude = 0.5): Float32Array {
  const samples = new Float32Array(Math.round(sampleRate * seconds));
  for (let index = 0; index < samples.length; index += 1) {
    samples[index] = amplitude * Math.sin((2 * Math.PI * frequency * index) / sampleRate);
  }
  return samples;
}

/** Amplitude of `frequency` in `samples` by correlating with a sine and cosine (one DFT bin). */
function toneAmplitude(samples: Float32Array, frequency: number, sampleRate: number): number {
  let inPhase = 0;
  let quadrature = 0;
  for (let index = 0; index < samples.length; index += 1) {
    const angle = (2 * Math.PI * frequency * index) / sampleRate;
    inPhase += (samples[index] ?? 0) * Math.cos(angle);
    quadrature += (samples[index] ?? 0) * Math.sin(angle);
  }
  return (2 * Math.hypot(inPhase, quadrature)) / samples.length;
}

/** The middle of a signal, away from the edges where the filter reads silence. */
function middle(samples: Float32Array, sampleRate: number): Float32Array {
  const margin = Math.round(sampleRate * 0.05);
  return samples.subarray(margin, samples.length - margin);
}

describe('resampleAudio', () => {
  it.each([
    [1000, 16_000, 24_000],
    [1000, 24_000, 16_000],
    [1000, 44_100, 16_000],
    [1000, 48_000, 16_000],
    [1000, 8_000, 16_000],
    [1000, 16_000, 22_050],
    [440, 8_000, 16_000],
  ])('keeps a %i Hz tone at its pitch and level from %i Hz to %i Hz', (frequency, sourceRate, targetRate) => {
    const input = sine(frequency, sourceRate, 0.5);
    const output = resampleAudio(input, sourceRate, targetRate);

    expect(output.length).toBe(Math.round((input.length * targetRate) / sourceRate));
    const level = toneAmplitude(middle(output, targetRate), frequency, targetRate);
    expect(level).toBeGreaterThan(0.49);
    expect(level).toBeLessThan(0.51);
    // Nothing else: the signal minus the ideal tone is at least 60 dB down.
    const ideal = sine(frequency, targetRate, output.length / targetRate);
    const residual = middle(output, targetRate).map((value, index) => value - (middle(ideal, targetRate)[index] ?? 0));
    const residualRms = Math.sqrt(residual.reduce((sum, value) => sum + value * value, 0) / residual.length);
    expect(residualRms).toBeLessThan(0.5 * 0.001);
  });

  it('turns one second at 48, 44.1 or 8 kHz into exactly one second at 16 kHz', () => {
    for (const sourceRate of [48_000, 44_100, 8_000]) {
      expect(resampleAudio(sine(1000, sourceRate, 1), sourceRate, 16_000)).toHaveLength(16_000);
    }
  });

  it.each([
    // 10 kHz at 48 kHz would alias to 6 kHz at 16 kHz if it were not filtered out first; 12 kHz to 4 kHz.
    [10_000, 6_000],
    [12_000, 4_000],
  ])('removes a %i Hz tone above the new Nyquist instead of folding it to %i Hz', (frequency, alias) => {
    const output = resampleAudio(sine(frequency, 48_000, 0.5), 48_000, 16_000);
    expect(toneAmplitude(middle(output, 16_000), alias, 16_000)).toBeLessThan(0.5 * 0.001);
  });

  it('adds no image above the old Nyquist when going up', () => {
    // A 7 kHz tone at 16 kHz would leave an image at 9 kHz with naive interpolation to 24 kHz.
    const output = resampleAudio(sine(7_000, 16_000, 0.5), 16_000, 24_000);
    expect(toneAmplitude(middle(output, 24_000), 7_000, 24_000)).toBeGreaterThan(0.45);
    expect(toneAmplitude(middle(output, 24_000), 9_000, 24_000)).toBeLessThan(0.5 * 0.001);
  });

  it('returns the input itself, uncopied, for equal rates and handles empty input', () => {
    const input = sine(440, 16_000, 0.01);
    expect(resampleAudio(input, 16_000, 16_000)).toBe(input);
    expect(resampleAudio(new Float32Array(0), 16_000, 24_000)).toHaveLength(0);
  });

  it('rejects rates that are not positive whole numbers', () => {
    expect(() => resampleAudio(new Float32Array(4), 0, 16_000)).toThrow(RangeError);
    expect(() => resampleAudio(new Float32Array(4), 16_000, 22_050.5)).toThrow(RangeError);
  });
});

describe('downmixToMono', () => {
  it('averages channels sample by sample', () => {
    const mono = downmixToMono([Float32Array.from([1, 0.5, -1]), Float32Array.from([0, 0.5, 1])]);
    expect(Array.from(mono)).toEqual([0.5, 0.5, 0]);
  });
});
