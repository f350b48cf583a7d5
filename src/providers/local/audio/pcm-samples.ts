/** Signed 16-bit samples to floats in [-1, 1). */
export function int16ToFloat32(samples: Int16Array): Float32Array {
  const output = new Float32Array(samples.length);
  for (let index = 0; index < samples.length; index += 1) output[index] = (samples[index] ?? 0) / 32768;
  return output;
}

/**
 * Floats in [-1, 1] to signed 16-bit, clipping anything louder (resampling can overshoot slightly).
 * One scale, 32768, both ways: every 16-bit sample survives int16ToFloat32 and back unchanged.
 */
export function float32ToInt16(samples: Float32Array): Int16Array {
  const output = new Int16Array(samples.length);
  for (let index = 0; index < samples.length; index += 1) {
    const value = Math.round((samples[index] ?? 0) * 32768);
    output[index] = Math.max(-32768, Math.min(32767, value));
  }
  return output;
}

export function concatenateInt16(parts: readonly Int16Array[]): Int16Array {
  const joined = new Int16Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    joined.set(part, offset);
    offset += part.length;
  }
  return joined;
}

/** Little-endian bytes of 16-bit samples, regardless of the host's byte order. */
export function int16ToLittleEndianBytes(samples: Int16Array): Uint8Array {
  const bytes = new Uint8Array(samples.length * 2);
  const view = new DataView(bytes.buffer);
  for (let index = 0; index < samples.length; index += 1) view.setInt16(index * 2, samples[index] ?? 0, true);
  return bytes;
}
