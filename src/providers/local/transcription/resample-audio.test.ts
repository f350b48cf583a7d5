import { describe, expect, it } from 'vitest';
import { downmixToMono, resample, toSigned16 } from './resample-audio.js';

function tone(frequency: number, sampleRate: number, seconds: number, amplitude = 0.5): Float32Array {
  return Float32Array.from({ length: Math.round(sampleRate * seconds) }, (_, index) => amplitude * Math.sin((2 * Math.PI * frequency * index) / sampleRate));
}

/** Amplitude of `frequency` in `samples` (single-bin DFT), ignoring the edges where the filter ramps. */
function amplitudeAt(samples: Float32Array, frequency: number, sampleRate: number): number {
  const margin = Math.floor(samples.length / 10);
  let real = 0;
  let imaginary = 0;
  for (let index = margin; index < samples.length - margin; index += 1) {
    const angle = (2 * Math.PI * frequency * index) / sampleRate;
    real += (samples[index] ?? 0) * Math.cos(angle);
    imaginary += (samples[index] ?? 0) * Math.sin(angle);
  }
  return (2 * Math.hypot(real, imaginary)) / (samples.length - 2 * margin);
}

describe('resample', () => {
  it('keeps a speech-band tone when going from 48 kHz and 44.1 kHz down to 16 kHz', () => {
    for (const sourceRate of [48_000, 44_100]) {
      const output = resample(tone(1000, sourceRate, 1), sourceRate, 16_000);
      expect(output.length).toBe(16_000);
      expect(amplitudeAt(output, 1000, 16_000)).toBeCloseTo(0.5, 2);
    }
  });

  it('removes content above the new Nyquist instead of folding it into the speech band', () => {
    // 12 kHz at 48 kHz would alias to 4 kHz at 16 kHz without the low-pass.
    const output = resample(tone(12_000, 48_000, 1), 48_000, 16_000);
    expect(amplitudeAt(output, 4000, 16_000)).toBeLessThan(0.005);
  });

  it('upsamples 8 kHz to 16 kHz without changing the tone', () => {
    const output = resample(tone(440, 8000, 1), 8000, 16_000);
    expect(output.length).toBe(16_000);
    expect(amplitudeAt(output, 440, 16_000)).toBeCloseTo(0.5, 2);
  });

  it('returns the input untouched at the same rate', () => {
    const input = tone(300, 16_000, 0.1);
    expect(resample(input, 16_000, 16_000)).toBe(input);
  });
});

describe('downmixToMono and toSigned16', () => {
  it('averages channels sample by sample', () => {
    const mono = downmixToMono([Float32Array.from([1, 0.5, -1]), Float32Array.from([0, 0.5, 1])]);
    expect(Array.from(mono)).toEqual([0.5, 0.5, 0]);
  });

  it('converts to 16-bit and clips out-of-range samples', () => {
    expect(Array.from(toSigned16(Float32Array.from([0, 1, -1, 2, -3, 0.5])))).toEqual([0, 32767, -32768, 32767, -32768, 16384]);
  });
});
