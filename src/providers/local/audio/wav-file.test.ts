import { describe, expect, it } from 'vitest';
import { LocalEngineError } from '../local-engine-error.js';
import { decodeWavPcm16, encodeWavPcm16 } from './wav-file.js';

describe('WAV files', () => {
  it('round-trips samples, including the extremes, through a 44-byte header', () => {
    const samples = Int16Array.from([0, 1, -1, 32767, -32768, 1234, -4321]);
    const bytes = encodeWavPcm16(samples, 22_050);
    expect(bytes.length).toBe(44 + samples.length * 2);
    expect(decodeWavPcm16(bytes)).toEqual({ sampleRate: 22_050, samples });
  });

  it('skips chunks it does not need, such as LIST', () => {
    const plain = encodeWavPcm16(Int16Array.from([5, -5]), 16_000);
    const list = new Uint8Array([...new TextEncoder().encode('LIST'), 3, 0, 0, 0, 1, 2, 3, 0]);
    const withList = new Uint8Array([...plain.subarray(0, 36), ...list, ...plain.subarray(36)]);
    expect(decodeWavPcm16(withList).samples).toEqual(Int16Array.from([5, -5]));
  });

  it('writes interleaved frames with the channel count, block align and byte rate of stereo', () => {
    const bytes = encodeWavPcm16(Int16Array.from([1, -1, 2, -2]), 48_000, 2);
    const view = new DataView(bytes.buffer);
    expect([view.getUint16(22, true), view.getUint32(24, true), view.getUint32(28, true), view.getUint16(32, true)]).toEqual([2, 48_000, 192_000, 4]);
    expect(view.getUint32(40, true)).toBe(8);
    expect([44, 46, 48, 50].map((offset) => view.getInt16(offset, true))).toEqual([1, -1, 2, -2]);
    expect(() => encodeWavPcm16(Int16Array.from([1, 2, 3]), 48_000, 2)).toThrow(RangeError);
  });

  it('refuses files that are not 16-bit mono PCM WAVE', () => {
    expect(() => decodeWavPcm16(new TextEncoder().encode('ID3 not a wave file at all'))).toThrow(LocalEngineError);
    const stereo = encodeWavPcm16(Int16Array.from([1, 2]), 16_000);
    new DataView(stereo.buffer).setUint16(22, 2, true);
    expect(() => decodeWavPcm16(stereo)).toThrow('not 16-bit mono PCM');
  });
});
