import { describe, expect, it } from 'vitest';

import { LocalEngineError } from '../local-engine-error.js';
import { GloveJsonReader, type GloveJsonContent } from './glove-json-reader.js';

/** The package's layout in miniature: 3 dimensions + l2 norm + word index per entry. */
const SAMPLE = JSON.stringify({
  precision: 8,
  l2NormIndex: 3,
  wordIndex: 4,
  size: 4,
  dimensions: 3,
  words: ['the', 'say "hi"', 'café', 'back\\slash'],
  vectors: {
    the: [0.1, -0.25, 3, 3.01, 0],
    'say "hi"': [4e-7, -5e-7, 1.5e2, 150, 1],
    café: [-0.12345678, 0.98765432, 0, 1.2, 2],
    'back\\slash': [1e-30, 0.5, 123456789.5, 1, 3],
  },
  unkVector: [0, 0, 0, -1],
});

function readInChunks(text: string, chunkBytes: number): GloveJsonContent {
  const bytes = Buffer.from(text, 'utf8');
  const reader = new GloveJsonReader();
  for (let offset = 0; offset < bytes.length; offset += chunkBytes) {
    reader.push(bytes.subarray(offset, offset + chunkBytes));
  }
  return reader.finish();
}

describe('GloveJsonReader', () => {
  it('reads words, the dimension and the first `dimension` values of each vector', () => {
    const content = readInChunks(SAMPLE, 1 << 20);
    expect(content.dimension).toBe(3);
    expect(content.rankedWords).toEqual(['the', 'say "hi"', 'café', 'back\\slash']);
    expect(content.vectorWords).toEqual(content.rankedWords);
    const expected = [0.1, -0.25, 3, 4e-7, -5e-7, 150, -0.12345678, 0.98765432, 0, 1e-30, 0.5, 123456789.5];
    expect(Array.from(content.vectors)).toEqual(expected.map(Math.fround));
  });

  it('gives the same result whatever the chunk boundaries (every size from 1 to 64 bytes)', () => {
    const whole = readInChunks(SAMPLE, 1 << 20);
    for (let chunkBytes = 1; chunkBytes <= 64; chunkBytes += 1) {
      const chunked = readInChunks(SAMPLE, chunkBytes);
      expect(chunked.rankedWords).toEqual(whole.rankedWords);
      expect(chunked.vectorWords).toEqual(whole.vectorWords);
      expect(Array.from(chunked.vectors)).toEqual(Array.from(whole.vectors));
    }
  });

  it('parses numbers exactly like parseFloat then Float32 rounding', () => {
    const numbers = ['0.1', '-0.33333333', '1e-7', '2.5E+3', '-0', '0.000001234', '98765.4321', '1.7976931348623157e308'];
    const text = `{"dimensions":${numbers.length},"words":["w"],"vectors":{"w":[${numbers.join(',')}]}}`;
    const content = readInChunks(text, 7);
    expect(Array.from(content.vectors)).toEqual(numbers.map((value) => Math.fround(Number.parseFloat(value))));
  });

  it('tolerates whitespace between tokens', () => {
    const text = '{ "dimensions" : 2 ,\n "words" : [ "a" , "b" ] ,\n "vectors" : { "a" : [ 1 , 2 ] , "b" : [3,4] } }\n';
    const content = readInChunks(text, 5);
    expect(content.vectorWords).toEqual(['a', 'b']);
    expect(Array.from(content.vectors)).toEqual([1, 2, 3, 4]);
  });

  it.each([
    ['a vector shorter than the dimension', '{"dimensions":3,"vectors":{"a":[1,2]}}'],
    ['vectors before the dimension is known', '{"vectors":{"a":[1,2]},"dimensions":2}'],
    ['a truncated file', '{"dimensions":2,"vectors":{"a":[1,2'],
    ['trailing garbage', '{"dimensions":2,"vectors":{"a":[1,2]}} x'],
    ['a non-object document', '[1,2,3]'],
    ['a number without digits', '{"dimensions":2,"vectors":{"a":[-,2]}}'],
  ])('rejects %s with an engine_failed LocalEngineError', (_name, text) => {
    let caught: unknown;
    try {
      readInChunks(text, 3);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(LocalEngineError);
    expect((caught as LocalEngineError).kind).toBe('engine_failed');
  });
});
