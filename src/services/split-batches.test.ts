import { describe, expect, it } from 'vitest';
import { splitBatches } from './split-batches.js';

describe('splitBatches', () => {
  it('caps inputs per batch and keeps each batch start', () => {
    expect(splitBatches(['a', 'b', 'c', 'd', 'e'], { maxInputs: 2, maxTokens: 1_000 })).toEqual([
      { start: 0, inputs: ['a', 'b'] },
      { start: 2, inputs: ['c', 'd'] },
      { start: 4, inputs: ['e'] },
    ]);
  });

  it('caps tokens per batch, counting UTF-8 bytes, and never leaves an input out', () => {
    expect(splitBatches(['aaaa', 'bbbb', 'cc', 'é', 'dddddddddd'], { maxInputs: 100, maxTokens: 8 })).toEqual([
      { start: 0, inputs: ['aaaa', 'bbbb'] },
      { start: 2, inputs: ['cc', 'é'] },
      // Larger than the budget alone: sent alone rather than dropped.
      { start: 4, inputs: ['dddddddddd'] },
    ]);
    expect(splitBatches([[1, 2, 3], [4, 5, 6], [7]], { maxInputs: 100, maxTokens: 6 })).toEqual([
      {
        start: 0,
        inputs: [
          [1, 2, 3],
          [4, 5, 6],
        ],
      },
      { start: 2, inputs: [[7]] },
    ]);
  });
});
