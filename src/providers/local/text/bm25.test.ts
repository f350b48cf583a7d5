import { describe, expect, it } from 'vitest';

import { bm25Terms, scoreBm25 } from './bm25.js';

describe('bm25Terms', () => {
  it('splits compounds, strips accents and keeps every word', () => {
    expect(bm25Terms("The café's state-of-the-art menu")).toEqual(['the', 'cafe', 'state', 'of', 'the', 'art', 'menu']);
  });
});

describe('scoreBm25', () => {
  const documents = ['the river flooded the town after the storm', 'interest rates at the bank went up', 'a quiet river bank at sunset', 'nothing to see here'];

  it('scores only documents containing query terms, in input order', () => {
    const { scores } = scoreBm25('river bank', documents);
    expect(scores).toHaveLength(4);
    expect(scores[3]).toBe(0);
    // Both terms beat either one alone.
    expect(scores[2]).toBeGreaterThan(scores[0]!);
    expect(scores[2]).toBeGreaterThan(scores[1]!);
  });

  it('matches the Okapi formula with k1 = 1.2 and b = 0.75', () => {
    const { scores, referenceScore } = scoreBm25('storm', documents);
    // N = 4, n = 1 → idf = ln(1 + 3.5 / 1.5); document 0 has 8 terms, the average is 6.25.
    const idf = Math.log(1 + 3.5 / 1.5);
    const lengthFactor = 1.2 * (1 - 0.75 + (0.75 * 8) / 6.25);
    expect(scores[0]).toBeCloseTo((idf * 1 * 2.2) / (1 + lengthFactor), 10);
    expect(referenceScore).toBeCloseTo(idf, 10);
  });

  it('saturates repeated terms and favours rarer terms', () => {
    const repeated = scoreBm25('river', ['river', 'river river river river', 'lake']).scores;
    expect(repeated[1]).toBeGreaterThan(repeated[0]!);
    expect(repeated[1]! / repeated[0]!).toBeLessThan(4);
    const rarity = scoreBm25('the storm', documents).scores;
    // "the" is in three documents, "storm" in one: the storm document wins clearly.
    expect(rarity[0]).toBeGreaterThan(rarity[1]! * 2);
  });

  it('gives a reference score ≈ a document holding each query term once', () => {
    const { scores, referenceScore } = scoreBm25('alpha beta', ['alpha beta', 'gamma delta', 'epsilon zeta']);
    expect(scores[0]! / referenceScore).toBeCloseTo(1, 10);
  });

  it('handles empty queries, empty documents and no documents', () => {
    expect(scoreBm25('', documents)).toEqual({ scores: [0, 0, 0, 0], referenceScore: 0 });
    expect(scoreBm25('?!', documents).scores).toEqual([0, 0, 0, 0]);
    expect(scoreBm25('river', ['', 'river']).scores[0]).toBe(0);
    expect(scoreBm25('river', [])).toEqual({ scores: [], referenceScore: 0 });
  });
});
