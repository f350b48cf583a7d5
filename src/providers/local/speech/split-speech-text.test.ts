import { describe, expect, it } from 'vitest';
import { splitSpeechText } from './split-speech-text.js';

describe('splitSpeechText', () => {
  it('packs whole sentences into chunks up to the target length', () => {
    const text = 'One two three. Four five six! Seven eight nine? Ten eleven.';
    expect(splitSpeechText(text, 30)).toEqual(['One two three. Four five six!', 'Seven eight nine? Ten eleven.']);
    expect(splitSpeechText(text, 1000)).toEqual([text]);
  });

  it('treats line breaks as sentence ends and drops blank lines', () => {
    expect(splitSpeechText('Title\n\n  First line\nSecond line  ', 12)).toEqual(['Title', 'First line', 'Second line']);
  });

  it('cuts an overlong sentence at commas, then between words, never losing a word', () => {
    const clauses = 'alpha beta gamma, delta epsilon zeta, eta theta iota';
    expect(splitSpeechText(clauses, 20)).toEqual(['alpha beta gamma,', 'delta epsilon zeta,', 'eta theta iota']);

    const words = Array.from({ length: 200 }, (_, index) => `word${index}`).join(' ');
    const chunks = splitSpeechText(words, 50);
    expect(chunks.every((chunk) => chunk.length <= 50)).toBe(true);
    expect(chunks.join(' ')).toBe(words);
  });

  it('slices a single word longer than the target', () => {
    expect(splitSpeechText('x'.repeat(25), 10)).toEqual(['x'.repeat(10), 'x'.repeat(10), 'x'.repeat(5)]);
  });

  it('keeps abbreviations and numbers readable within a chunk', () => {
    expect(splitSpeechText('It costs $3.50 at 10:30 today.', 400)).toEqual(['It costs $3.50 at 10:30 today.']);
  });

  it('returns nothing for whitespace', () => {
    expect(splitSpeechText(' \n\t ')).toEqual([]);
  });
});
