import { describe, expect, it } from 'vitest';
import { closestNames, editDistance } from './closest-names.js';

describe('closestNames', () => {
  const known = ['gpt-4o-mini', 'gpt-4o', 'gpt-4.1', 'text-embedding-3-small', 'claude-sonnet-4', 'local-embed'];

  it('finds a missing separator, a swap, a wrong letter', () => {
    expect(closestNames('gpt4o-mini', known)[0]).toBe('gpt-4o-mini');
    expect(closestNames('gtp-4o-mini', known)[0]).toBe('gpt-4o-mini');
    expect(closestNames('claude-sonet-4', known)).toEqual(['claude-sonnet-4']);
    expect(closestNames('GPT-4O', known)[0]).toBe('gpt-4o');
  });

  it('finds a name it is a prefix of, or that is a prefix of it', () => {
    expect(closestNames('text-embedding', known)).toEqual(['text-embedding-3-small']);
    expect(closestNames('local-embed-v2', known)).toEqual(['local-embed']);
  });

  it('offers nothing for a name far from every known one, and at most the limit', () => {
    expect(closestNames('llama-3-70b-instruct', known)).toEqual([]);
    expect(closestNames('', known)).toEqual([]);
    expect(closestNames('gpt', known, 2)).toHaveLength(2);
  });

  it('counts a swap of neighbours as one edit', () => {
    expect(editDistance('ab', 'ba')).toBe(1);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
  });
});
