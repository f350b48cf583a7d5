import { scoreBm25 } from './bm25.js';
import { cosineOfUnitVectors, embedText } from './embed-text.js';
import type { WordVectors } from './glove-table.js';

/**
 * Relevance = LEXICAL_WEIGHT · lexical + (1 − LEXICAL_WEIGHT) · semantic, both in [0, 1]:
 * - lexical: BM25 (k1 1.2, b 0.75) divided by the score of an average-length document holding
 *   every query term once, capped at 1 ("how much of the query is literally there");
 * - semantic: cosine of the SIF/GloVe embeddings, negatives clamped to 0 (after the common
 *   direction is removed, unrelated texts sit near 0 and close paraphrases near 0.6–0.8).
 *
 * The weight was measured on the fixed set in sanity-fixtures.json (10 queries × 5 one-sentence
 * documents; most distractors share words with the query). Top-1 hits / mean reciprocal rank:
 *   weight 0 (cosine alone) → 9/10, 0.95;  0.1–0.25 → 9/10, 0.95;  0.3 → 8/10, 0.90;
 *   0.4 → 7/10, 0.85;  0.5 → 7/10, 0.83;  1 (BM25 alone) → 5/10, 0.62.
 * That set is built to mislead BM25, while on real retrieval benchmarks BM25 beats averaged word
 * vectors, so 0.2 takes as much of the exact-term signal as costs nothing on the set: it breaks
 * near-ties and lifts documents that spell out the query's rare words, without letting one
 * shared word outvote a clearly better paraphrase. (The one miss at every weight ≤ 0.25: for
 * "best way to learn a new language", "The new programming language release…" edges out the
 * document about practising with native speakers, 0.46 to 0.45 in cosine.)
 *
 * Without word vectors (null) the score is the lexical part alone.
 */
export const LEXICAL_WEIGHT = 0.2;

export function rerankDocuments(vectors: WordVectors | null, query: string, documents: readonly string[]): number[] {
  if (documents.length === 0) return [];
  const { scores, referenceScore } = scoreBm25(query, documents);
  const lexical = scores.map((score) => (referenceScore > 0 ? Math.min(1, score / referenceScore) : 0));
  if (vectors === null) return lexical;

  const queryEmbedding = embedText(vectors, query);
  return documents.map((document, index) => {
    const semantic = Math.max(0, cosineOfUnitVectors(queryEmbedding, embedText(vectors, document)));
    const relevance = LEXICAL_WEIGHT * lexical[index]! + (1 - LEXICAL_WEIGHT) * semantic;
    // Float32 dot products of unit vectors can overshoot 1 by an ulp or two.
    return Math.min(1, Math.max(0, relevance));
  });
}
