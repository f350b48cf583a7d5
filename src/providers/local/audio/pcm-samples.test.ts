import { describe, expect, it } from 'vitest';
import { float32ToInt16, int16ToFloat32 } from './pcm-samples.js';

describe('float32ToInt16', () => {
  it('converts to 16-bit and clips out-of-range samples', () => {
    expect(Array.from(float32ToInt16(Float32Array.from([0, 1, -1, 2, -3, 0.5])))).toEqual([0, 32767, -32768, 32767, -32768, 16384]);
  });

  it('gives back every 16-bit sample that int16ToFloat32 was handed', () => {
    const everyValue = Int16Array.from({ length: 65_536 }, (_, index) => index - 32_768);
    expect(float32ToInt16(int16ToFloat32(everyValue))).toEqual(everyValue);
  });
});
