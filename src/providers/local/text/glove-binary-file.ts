import { open, rename, rm } from 'node:fs/promises';
import { endianness } from 'node:os';

import { LocalEngineError } from '../local-engine-error.js';

/**
 * The compact cache format for word vectors (little-endian):
 *
 *   offset 0   8 bytes  magic "SWYGLOVE"
 *   offset 8   uint32   format version (1)
 *   offset 12  uint32   dimension
 *   offset 16  uint32   word count
 *   offset 20  uint32   vocabulary byte length (UTF-8, words joined by "\n", then zero padding
 *                       to a multiple of 4 so the vectors are Float32-aligned in the file)
 *   offset 24  vocabulary
 *   then       word count x dimension float32, one row per word, most frequent word first
 *
 * A word's row number is its frequency rank. The exact file length follows from the header, so
 * a truncated or foreign file is recognised and rebuilt instead of being half-read.
 */
export const GLOVE_BINARY_MAGIC = 'SWYGLOVE';
export const GLOVE_BINARY_VERSION = 1;
const HEADER_BYTES = 24;

export interface GloveBinaryContent {
  readonly dimension: number;
  readonly words: readonly string[];
  readonly vectors: Float32Array;
}

export interface IndexedGloveContent extends GloveBinaryContent {
  /** Word to row (= frequency rank). */
  readonly ranks: ReadonlyMap<string, number>;
}

/** Maps each word to its row; should a word repeat, the first (more frequent) row wins. */
export function indexWords(words: readonly string[]): Map<string, number> {
  const ranks = new Map<string, number>();
  for (let row = words.length - 1; row >= 0; row -= 1) ranks.set(words[row]!, row);
  return ranks;
}

function paddedLength(byteLength: number): number {
  return Math.ceil(byteLength / 4) * 4;
}

function assertLittleEndianHost(): void {
  // Float32Array views use the host byte order; every platform Node ships for is little-endian.
  if (endianness() !== 'LE') {
    throw new LocalEngineError('engine_failed', 'Word vectors need a little-endian machine.');
  }
}

/**
 * Writes the file under a unique temporary name, flushes it to disk, then renames it into place:
 * a reader sees either no file or a complete one, and two writers racing just replace one
 * complete file with an identical one.
 */
export async function writeGloveBinary(path: string, content: GloveBinaryContent): Promise<void> {
  assertLittleEndianHost();
  const { dimension, words, vectors } = content;
  if (vectors.length !== words.length * dimension) {
    throw new LocalEngineError('engine_failed', 'Word vectors are inconsistent.');
  }
  if (words.some((word) => word.includes('\n'))) {
    throw new LocalEngineError('engine_failed', 'Word vectors contain an unsupported word.');
  }
  const vocabulary = Buffer.from(words.join('\n'), 'utf8');
  const header = Buffer.alloc(HEADER_BYTES);
  header.write(GLOVE_BINARY_MAGIC, 0, 'latin1');
  header.writeUInt32LE(GLOVE_BINARY_VERSION, 8);
  header.writeUInt32LE(dimension, 12);
  header.writeUInt32LE(words.length, 16);
  header.writeUInt32LE(paddedLength(vocabulary.length), 20);
  const padding = Buffer.alloc(paddedLength(vocabulary.length) - vocabulary.length);
  const vectorBytes = Buffer.from(vectors.buffer, vectors.byteOffset, vectors.byteLength);

  const temporaryPath = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  const handle = await open(temporaryPath, 'w');
  try {
    await handle.writev([header, vocabulary, padding, vectorBytes]);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(temporaryPath, { force: true });
    throw error;
  }
  await handle.close();
  try {
    await rename(temporaryPath, path);
  } catch (error) {
    await rm(temporaryPath, { force: true });
    throw error;
  }
}

/**
 * Reads the file, or returns null if it is missing, truncated or of another format/version.
 * The vectors (~140 MB) are read on libuv's thread pool while this thread decodes and indexes the
 * vocabulary, which roughly halves the load time.
 */
export async function readGloveBinary(path: string): Promise<IndexedGloveContent | null> {
  assertLittleEndianHost();
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  try {
    const header = Buffer.alloc(HEADER_BYTES);
    const { bytesRead } = await handle.read(header, 0, HEADER_BYTES, 0);
    if (bytesRead !== HEADER_BYTES) return null;
    if (header.toString('latin1', 0, 8) !== GLOVE_BINARY_MAGIC) return null;
    if (header.readUInt32LE(8) !== GLOVE_BINARY_VERSION) return null;
    const dimension = header.readUInt32LE(12);
    const wordCount = header.readUInt32LE(16);
    const vocabularyBytes = header.readUInt32LE(20);
    if (dimension === 0 || wordCount === 0 || vocabularyBytes % 4 !== 0) return null;
    const vectorBytes = wordCount * dimension * 4;
    const { size } = await handle.stat();
    if (size !== HEADER_BYTES + vocabularyBytes + vectorBytes) return null;

    const vocabulary = Buffer.alloc(vocabularyBytes);
    await readFully(handle, vocabulary, HEADER_BYTES);
    const vectors = new Float32Array(wordCount * dimension);
    const vectorView = Buffer.from(vectors.buffer, vectors.byteOffset, vectors.byteLength);
    const vectorsRead = readFully(handle, vectorView, HEADER_BYTES + vocabularyBytes);
    // Never leave the read unobserved: if indexing throws, the finally block still awaits it.
    vectorsRead.catch(() => undefined);
    try {
      let vocabularyEnd = vocabulary.length;
      while (vocabularyEnd > 0 && vocabulary[vocabularyEnd - 1] === 0) vocabularyEnd -= 1;
      const words = vocabulary.toString('utf8', 0, vocabularyEnd).split('\n');
      if (words.length !== wordCount) return null;
      const ranks = indexWords(words);
      await vectorsRead;
      return { dimension, words, vectors, ranks };
    } finally {
      await vectorsRead.catch(() => undefined);
    }
  } finally {
    await handle.close();
  }
}

async function readFully(handle: Awaited<ReturnType<typeof open>>, target: Buffer, filePosition: number): Promise<void> {
  let done = 0;
  while (done < target.length) {
    const { bytesRead } = await handle.read(target, done, target.length - done, filePosition + done);
    if (bytesRead === 0) {
      throw new LocalEngineError('engine_failed', 'The word-vector cache file is truncated.');
    }
    done += bytesRead;
  }
}
