import type { EmbeddingLimits } from '../providers/provider-adapter.js';

/**
 * Splits inputs into runs that fit one upstream call: at most `maxInputs` inputs, and at most
 * `maxTokens` tokens counted as UTF-8 bytes (a token covers at least one byte, so this never
 * underestimates). Each batch keeps the position of its first input.
 */
export function splitBatches<T extends string | readonly number[]>(inputs: readonly T[], limits: EmbeddingLimits): Array<{ start: number; inputs: T[] }> {
  const batches: Array<{ start: number; inputs: T[] }> = [];
  let current: T[] = [];
  let start = 0;
  let tokens = 0;
  inputs.forEach((input, index) => {
    const size = typeof input === 'string' ? Buffer.byteLength(input) : input.length;
    if (current.length > 0 && (current.length >= limits.maxInputs || tokens + size > limits.maxTokens)) {
      batches.push({ start, inputs: current });
      current = [];
      start = index;
      tokens = 0;
    }
    current.push(input);
    tokens += size;
  });
  if (current.length > 0) batches.push({ start, inputs: current });
  return batches;
}
