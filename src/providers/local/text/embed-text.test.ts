import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { cosineOfUnitVectors, embedText, resolveToken } from './embed-text.js';
import { loadWordVectors, type WordVectors } from './glove-table.js';

/** Shared with the other text tests and kept across runs: the first conversion takes seconds. */
const SHARED_CACHE_DIRECTORY = join(tmpdir(), 'switchyard-test-glove');

interface Triple {
  anchor: string;
  related: string;
  unrelated: string;
}

function norm(vector: Float32Array): number {
  let squares = 0;
  for (const value of vector) squares += value * value;
  return Math.sqrt(squares);
}

describe('embedText', () => {
  let vectors: WordVectors;
  let triples: Triple[];

  beforeAll(async () => {
    vectors = await loadWordVectors({ cacheDirectory: SHARED_CACHE_DIRECTORY });
    const fixtures = JSON.parse(await readFile(new URL('./sanity-fixtures.json', import.meta.url), 'utf8')) as {
      triples: Triple[];
    };
    triples = fixtures.triples;
  });

  it('returns unit-length vectors of the table’s dimension, identical on every call', () => {
    for (const text of ['The cat sat on the mat.', 'Quarterly revenue grew by eight percent.', 'x']) {
      const first = embedText(vectors, text);
      expect(first).toHaveLength(100);
      expect(norm(first)).toBeCloseTo(1, 5);
      expect(Array.from(embedText(vectors, text))).toEqual(Array.from(first));
    }
  });

  it('ranks the related sentence above the unrelated one for every fixed triple', () => {
    const results = triples.map((triple) => {
      const anchor = embedText(vectors, triple.anchor);
      const related = cosineOfUnitVectors(anchor, embedText(vectors, triple.related));
      const unrelated = cosineOfUnitVectors(anchor, embedText(vectors, triple.unrelated));
      return { anchor: triple.anchor, related, unrelated, margin: related - unrelated };
    });
    console.table(
      results.map((result) => ({ ...result, related: result.related.toFixed(3), unrelated: result.unrelated.toFixed(3), margin: result.margin.toFixed(3) })),
    );
    expect(results.filter((result) => result.margin <= 0)).toEqual([]);
    expect(triples.length).toBeGreaterThanOrEqual(10);
  });

  it('treats case, punctuation and contractions as the same words', () => {
    const plain = embedText(vectors, 'do not open the door');
    expect(cosineOfUnitVectors(plain, embedText(vectors, "DON'T open the door!!!"))).toBeCloseTo(1, 5);
  });

  it('maps accented, hyphenated and apostrophe words onto the vocabulary', () => {
    expect(resolveToken(vectors, 'café')).toEqual(['cafe']);
    expect(resolveToken(vectors, 'well-known')).toEqual(['well-known']);
    expect(resolveToken(vectors, "o'neill")).toEqual(['oneill']);
    expect(resolveToken(vectors, 'qwzx-river')).toEqual(['qwzx', 'river']);
  });

  it('gives empty, blank and punctuation-only text a fixed non-zero vector instead of NaN', () => {
    const empty = embedText(vectors, '');
    expect(norm(empty)).toBeCloseTo(1, 5);
    expect(Array.from(embedText(vectors, '  \n '))).toEqual(Array.from(empty));
    const dots = embedText(vectors, '...');
    expect(norm(dots)).toBeCloseTo(1, 5);
    expect(cosineOfUnitVectors(dots, empty)).toBeLessThan(0.5);
  });

  it('tells emoji-only and number-only texts apart, deterministically', () => {
    const party = embedText(vectors, '🎉🎉');
    const snake = embedText(vectors, '🐍');
    expect(norm(party)).toBeCloseTo(1, 5);
    expect(Array.from(embedText(vectors, '🎉🎉'))).toEqual(Array.from(party));
    expect(cosineOfUnitVectors(party, snake)).toBeLessThan(0.5);
    const first = embedText(vectors, '4711 0815');
    expect(norm(first)).toBeCloseTo(1, 5);
    expect(cosineOfUnitVectors(first, embedText(vectors, '1234 5678'))).toBeLessThan(0.5);
  });

  it('brings texts sharing an unknown identifier closer together', () => {
    const query = embedText(vectors, 'error qx7781 during upload');
    const sharing = cosineOfUnitVectors(query, embedText(vectors, 'upload error qx7781'));
    const other = cosineOfUnitVectors(query, embedText(vectors, 'upload error qz5512'));
    expect(sharing).toBeGreaterThan(other);
  });

  it('embeds a 2048-token text quickly and keeps it on topic', () => {
    const words = ['river', 'water', 'flood', 'rain', 'bank', 'stream', 'storm', 'the'];
    const long = Array.from({ length: 2048 }, (_, index) => words[index % words.length]).join(' ');
    const started = performance.now();
    const embedded = embedText(vectors, long);
    console.log(`2048-token text embedded in ${(performance.now() - started).toFixed(2)} ms`);
    expect(norm(embedded)).toBeCloseTo(1, 5);
    const onTopic = cosineOfUnitVectors(embedded, embedText(vectors, 'Heavy rain flooded the river.'));
    const offTopic = cosineOfUnitVectors(embedded, embedText(vectors, 'The senate passed the tax bill.'));
    expect(onTopic).toBeGreaterThan(offTopic);
  });

  it('reports the time per sentence (not asserted)', () => {
    const sentence = 'The quick brown fox jumps over the lazy dog near the old barn.';
    for (let round = 0; round < 200; round += 1) embedText(vectors, sentence);
    const rounds = 2000;
    const started = performance.now();
    for (let round = 0; round < rounds; round += 1) embedText(vectors, sentence);
    console.log(`embedText: ${(((performance.now() - started) / rounds) * 1000).toFixed(1)} µs per 13-word sentence`);
  });
});
