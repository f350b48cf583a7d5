import { describe, expect, it } from 'vitest';
import { parsePocketsphinxOutput } from './pocketsphinx-output.js';

// The shape pocketsphinx_continuous 0.8 prints with `-time yes`: per utterance a hypothesis line,
// then one timed line per token, fillers and pronunciation variants included.
const OUTPUT = [
  'the quick brown fox',
  '<s> 0.880 1.130 0.999800',
  'the 1.140 1.280 0.600220',
  'quick 1.290 1.560 0.082514',
  '[NOISE] 1.570 1.600 0.500000',
  'brown 1.610 1.910 0.610390',
  '<sil> 1.920 2.100 0.999800',
  'fox 2.110 2.280 1.000100',
  '</s> 2.290 2.400 1.000000',
  'and ask',
  '<s> 7.050 7.160 1.000000',
  'and(2) 8.260 8.390 0.792845',
  'ask 8.400 8.650 0.619864',
  '++BREATH++ 8.660 8.700 0.5',
  '</s> 8.710 8.890 1.000000',
  '',
].join('\n');

describe('parsePocketsphinxOutput', () => {
  it('keeps the timed words, drops fillers and strips pronunciation variants', () => {
    expect(parsePocketsphinxOutput(OUTPUT)).toEqual([
      { word: 'the', start: 1.14, end: 1.28 },
      { word: 'quick', start: 1.29, end: 1.56 },
      { word: 'brown', start: 1.61, end: 1.91 },
      { word: 'fox', start: 2.11, end: 2.28 },
      { word: 'and', start: 8.26, end: 8.39 },
      { word: 'ask', start: 8.4, end: 8.65 },
    ]);
  });

  it('returns no words for empty output', () => {
    expect(parsePocketsphinxOutput('')).toEqual([]);
  });
});
