import { describe, expect, it } from 'vitest';
import { normalizeWords, wordErrorRate } from './word-error-rate.js';

describe('wordErrorRate', () => {
  it('is zero for texts that differ only in case and punctuation', () => {
    expect(normalizeWords("Hello, World! It's  fine.")).toEqual(['hello', 'world', "it's", 'fine']);
    expect(wordErrorRate('Hello, world.', 'hello world')).toEqual({ errors: 0, referenceWords: 2, rate: 0 });
  });

  it('counts substitutions, deletions and insertions on the best alignment', () => {
    expect(wordErrorRate('the quick brown fox', 'the quack brown fox').errors).toBe(1);
    expect(wordErrorRate('the quick brown fox', 'the brown fox').errors).toBe(1);
    expect(wordErrorRate('the quick brown fox', 'the quick brown fox jumps').errors).toBe(1);
    const mixed = wordErrorRate('please call stella and ask her', 'please call spelling ask her now');
    expect(mixed.errors).toBe(3);
    expect(mixed.rate).toBeCloseTo(0.5, 10);
  });

  it('handles empty texts on either side', () => {
    expect(wordErrorRate('', '').rate).toBe(0);
    expect(wordErrorRate('one two', '').rate).toBe(1);
    expect(wordErrorRate('', 'noise words').errors).toBe(2);
  });
});
