import { describe, expect, it } from 'vitest';

import { stripDiacritics, tokeniseText } from './tokenise-text.js';

describe('tokeniseText', () => {
  it('lowercases words and drops punctuation', () => {
    expect(tokeniseText('Hello, World! How are you?')).toEqual(['hello', 'world', 'how', 'are', 'you']);
  });

  it('expands contractions, including curly apostrophes and irregular negations', () => {
    expect(tokeniseText("Don't panic, it's fine")).toEqual(['do', 'not', 'panic', 'it', 'fine']);
    expect(tokeniseText('I can’t and won’t')).toEqual(['i', 'can', 'not', 'and', 'will', 'not']);
    expect(tokeniseText("we're, they've, you'll, she'd, I'm")).toEqual(['we', 'are', 'they', 'have', 'you', 'will', 'she', 'would', 'i', 'am']);
  });

  it('keeps hyphenated compounds and names with apostrophes whole', () => {
    expect(tokeniseText("state-of-the-art e-mail O'Neill")).toEqual(['state-of-the-art', 'e-mail', "o'neill"]);
  });

  it('joins dotted initialisms and keeps numbers with separators', () => {
    expect(tokeniseText('The U.S. grew 3.5% in the 1990s, e.g. 1,000 items.')).toEqual([
      'the',
      'us',
      'grew',
      '3.5',
      '%',
      'in',
      'the',
      '1990s',
      'eg',
      '1,000',
      'items',
    ]);
    // A single letter followed by ".word" is not an initialism.
    expect(tokeniseText('x.long')).toEqual(['x', 'long']);
  });

  it('makes emoji sequences and symbols tokens of their own', () => {
    expect(tokeniseText('🎉🎉 👍🏽 👨‍👩‍👧 🇫🇷 $450 €20')).toEqual(['🎉', '🎉', '👍🏽', '👨‍👩‍👧', '🇫🇷', '$', '450', '€', '20']);
  });

  it('normalises compatibility characters and splits identifiers at underscores', () => {
    expect(tokeniseText('ﬁnance ＡＢＣ ERR_CONN_7781')).toEqual(['finance', 'abc', 'err', 'conn', '7781']);
  });

  it('returns nothing for empty, blank or punctuation-only text', () => {
    expect(tokeniseText('')).toEqual([]);
    expect(tokeniseText(' \n\t ')).toEqual([]);
    expect(tokeniseText('...!!! ?')).toEqual([]);
  });
});

describe('stripDiacritics', () => {
  it('removes accents and leaves plain words alone', () => {
    expect(['café', 'zürich', 'naïve', 'plain'].map(stripDiacritics)).toEqual(['cafe', 'zurich', 'naive', 'plain']);
  });
});
