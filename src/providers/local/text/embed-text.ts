import type { WordVectors } from './glove-table.js';
import { sifWeight } from './sif-weighting.js';
import { stripDiacritics, tokeniseText } from './tokenise-text.js';

/*
 * Sentence embedding = SIF-weighted mean of GloVe word vectors with the common discourse
 * direction projected out, L2-normalised (weights and direction: sif-weighting.ts). Measured on
 * the fixed triples in sanity-fixtures.json, removing the direction moves unrelated sentence pairs
 * from cosine ≈ 0.43 to ≈ 0, and the smallest related-minus-unrelated margin from 0.16 to 0.31
 * (mean 0.38 → 0.66); it also let the reranker take more BM25 without losing a query.
 */

/**
 * Words outside the vocabulary (names, codes, numbers, emoji) get a pseudo-random vector derived
 * from a hash of the word, with the weight of a rare word and the norm of a rare GloVe word
 * (measured: median ≈ 4 beyond rank 100k). It is nearly orthogonal to everything else, so it only
 * dilutes, but two texts sharing the same unknown token ("ERR_4711") do come out closer, and texts
 * made only of unknown tokens still differ from one another instead of all being equal.
 */
const UNKNOWN_WORD_NORM = 4;

/**
 * Single letters are absent from this vocabulary (the package dropped one-character words), yet
 * "a" and "i" are among the most frequent English words; they are skipped rather than given a
 * rare-word hashed vector that would dominate short texts.
 */
const SINGLE_LETTER = /^\p{L}$/u;

/** Prefix that keeps the whole-text fallback apart from the hashed vector of a single token. */
const WHOLE_TEXT_SEED = '\u0000text:';

/**
 * Embeds `text` as a unit-length vector of `vectors.dimension` values. Deterministic.
 *
 * A text with no usable token at all (empty, whitespace, punctuation only) cannot be averaged:
 * a zero vector would make every cosine 0 (or NaN), so it gets the hashed vector of the text
 * itself with whitespace collapsed: identical such texts are identical (cosine 1), different
 * ones differ, and all are nearly orthogonal to real sentences.
 */
export function embedText(vectors: WordVectors, text: string): Float32Array {
  const dimension = vectors.dimension;
  const sum = new Float64Array(dimension);
  const rareWeight = sifWeight(vectors.size, vectors.size);
  let used = 0;

  const add = (vector: ArrayLike<number>, weight: number): void => {
    for (let index = 0; index < dimension; index += 1) sum[index]! += weight * vector[index]!;
    used += 1;
  };

  for (const token of tokeniseText(text)) {
    for (const word of resolveToken(vectors, token)) {
      const rank = vectors.rankOf(word);
      const vector = rank >= 0 ? vectors.vectorOf(word) : null;
      if (vector !== null) add(vector, sifWeight(rank, vectors.size));
      else if (!SINGLE_LETTER.test(word)) add(hashedVector(word, dimension), rareWeight);
    }
  }
  const embedded = used === 0 ? null : normalise(removeDirection(sum, vectors.commonDirection));
  if (embedded !== null) return embedded;
  // Also reached if weighted vectors cancel out exactly, which real text never does.
  const fallback = normalise(hashedVector(WHOLE_TEXT_SEED + collapseWhitespace(text), dimension));
  if (fallback === null) throw new RangeError('Word vectors must have a positive dimension.');
  return fallback;
}

/**
 * Maps one token to vocabulary words: itself, else without accents ("café"), else with its
 * hyphens/apostrophes removed ("e-mail" → "email", "o'neill" → "oneill"), else its parts
 * ("data-driven" → "data", "driven"). An unknown part is returned as is (it gets a hashed vector).
 */
export function resolveToken(vectors: WordVectors, token: string): readonly string[] {
  const direct = knownForm(vectors, token);
  if (direct !== null) return [direct];
  if (!/['-]/.test(token)) return [token];
  const joined = knownForm(vectors, token.replace(/['-]/g, ''));
  if (joined !== null) return [joined];
  return token
    .split(/['-]/)
    .filter((part) => part.length > 0)
    .map((part) => knownForm(vectors, part) ?? part);
}

function knownForm(vectors: WordVectors, word: string): string | null {
  if (vectors.rankOf(word) >= 0) return word;
  const plain = stripDiacritics(word);
  if (plain !== word && vectors.rankOf(plain) >= 0) return plain;
  return null;
}

function removeDirection(vector: Float64Array, direction: Float32Array): Float64Array {
  let projection = 0;
  for (let index = 0; index < vector.length; index += 1) projection += vector[index]! * direction[index]!;
  for (let index = 0; index < vector.length; index += 1) vector[index]! -= projection * direction[index]!;
  return vector;
}

function collapseWhitespace(text: string): string {
  return text.trim().replace(/\s+/g, ' ');
}

/** FNV-1a over UTF-16 code units: stable across runs and platforms. */
function hashString(value: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < value.length; index += 1) {
    hash ^= value.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** A deterministic pseudo-random vector (mulberry32 seeded by the hash) of norm UNKNOWN_WORD_NORM. */
function hashedVector(word: string, dimension: number): Float64Array {
  let state = hashString(word);
  const vector = new Float64Array(dimension);
  let squares = 0;
  for (let index = 0; index < dimension; index += 1) {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), state | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    const uniform = ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
    vector[index] = uniform * 2 - 1;
    squares += vector[index]! * vector[index]!;
  }
  const scale = UNKNOWN_WORD_NORM / Math.sqrt(squares);
  for (let index = 0; index < dimension; index += 1) vector[index]! *= scale;
  return vector;
}

function normalise(vector: Float64Array): Float32Array | null {
  let squares = 0;
  for (const value of vector) squares += value * value;
  const norm = Math.sqrt(squares);
  if (!(norm > 0) || !Number.isFinite(norm)) return null;
  const result = new Float32Array(vector.length);
  for (let index = 0; index < vector.length; index += 1) result[index] = vector[index]! / norm;
  return result;
}

/** Cosine of two unit vectors (their dot product), as a double. */
export function cosineOfUnitVectors(left: Float32Array, right: Float32Array): number {
  let dot = 0;
  for (let index = 0; index < left.length; index += 1) dot += left[index]! * right[index]!;
  return dot;
}
