import { countTokens as encodeCount, decode } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { MAX_BYTES_PER_TOKEN } from '../api/embeddings-request.js';
import { countInSegments, LONGEST_PIECE, segments } from './token-segments.js';

const options = { disallowedSpecial: new Set<string>() };
const encode = (text: string): number => encodeCount(text, options);

describe('countInSegments', () => {
  it('counts ordinary text exactly as the tokenizer does over the whole text', () => {
    const texts = [
      'The quick brown fox jumps over the lazy dog. '.repeat(2_000),
      'Grüße aus Köln — naïve café, 你好世界，こんにちは。 🚀 emoji and 12345 numbers; done.\n'.repeat(500),
      'def f(x):\n    return x ** 2  # squares\n\n'.repeat(800),
      '<|endoftext|> is plain text here',
    ];
    for (const text of texts) expect(countInSegments(encode, text)).toBe(encode(text));
  });

  it('cuts runs of one class longer than a piece, and never a surrogate pair', () => {
    const run = '𝒜'.repeat(300);
    const parts = [...segments(`start ${run} end`)];
    expect(parts.join('')).toBe(`start ${run} end`);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(LONGEST_PIECE + 1);
    expect(parts.every((part) => !/^[\udc00-\udfff]/.test(part))).toBe(true);
  });

  it('counts adversarial runs close to the whole-text count, and stops past a limit', () => {
    for (const character of ['a', ' ', '!', 'A', '\n']) {
      const text = character.repeat(8_000);
      const exact = encode(text);
      const counted = countInSegments(encode, text);
      expect(Math.abs(counted - exact)).toBeLessThanOrEqual(Math.ceil(text.length / LONGEST_PIECE));
    }
    // 150,000 `a`: the defect took 9.8 s; with a limit the count stops after a few pieces.
    const counted = countInSegments(encode, 'a'.repeat(150_000), 2_048);
    expect(counted).toBeGreaterThan(2_048);
    expect(counted).toBeLessThan(2_048 + 64);
  });

  it('MAX_BYTES_PER_TOKEN is the longest token of the vocabulary, in UTF-8 bytes', () => {
    let longest = 0;
    for (let id = 0; id < 200_000; id++) {
      let text: string;
      try {
        text = decode([id]);
      } catch {
        continue;
      }
      longest = Math.max(longest, Buffer.byteLength(text));
    }
    expect(longest).toBe(MAX_BYTES_PER_TOKEN);
  });
});
