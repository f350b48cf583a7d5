import { stripDiacritics, tokeniseText } from './tokenise-text.js';

/**
 * Okapi BM25 of one query against a small set of documents (the documents are the whole
 * collection, as in a rerank request). idf = ln(1 + (N − n + 0.5) / (n + 0.5)), which never goes
 * negative, so a term found in every document still counts a little.
 */
export interface Bm25Options {
  /** Term-frequency saturation. */
  k1?: number;
  /** Length normalisation. */
  b?: number;
}

export interface Bm25Result {
  /** One score per document, in input order; 0 when no query term occurs. */
  readonly scores: number[];
  /**
   * The score of a document of average length that contains every query term once (the sum of
   * the query terms' idf). Dividing by it gives a query-independent scale: ≈ 1 means "all query
   * terms present", above 1 means repeated terms. 0 when the query has no usable term.
   */
  readonly referenceScore: number;
}

/**
 * Text → BM25 terms: the shared tokens, compound words split into their parts, accents removed.
 *
 * No stopword list and no stemming: neither helped on the fixed rerank set in
 * sanity-fixtures.json. BM25 alone put the relevant document first for 5/10 queries without a
 * stopword list and 3/10 with a 90-word one; Harman's plural stemmer changed nothing without the
 * list and cost a query with it; the blended reranker kept 9/10 up to a BM25 weight of 0.2
 * without them, only up to 0.1 with them. idf already discounts words that occur everywhere.
 */
export function bm25Terms(text: string): string[] {
  const terms: string[] = [];
  for (const token of tokeniseText(text)) {
    for (const part of token.split(/['-]/)) {
      if (part.length > 0) terms.push(stripDiacritics(part));
    }
  }
  return terms;
}

export function scoreBm25(query: string, documents: readonly string[], options: Bm25Options = {}): Bm25Result {
  const k1 = options.k1 ?? 1.2;
  const b = options.b ?? 0.75;
  const queryTerms = [...new Set(bm25Terms(query))];
  if (queryTerms.length === 0 || documents.length === 0) {
    return { scores: documents.map(() => 0), referenceScore: 0 };
  }

  const wanted = new Set(queryTerms);
  const frequencies: Map<string, number>[] = [];
  const lengths: number[] = [];
  const documentFrequency = new Map<string, number>();
  for (const document of documents) {
    const terms = bm25Terms(document);
    const counts = new Map<string, number>();
    for (const term of terms) {
      if (wanted.has(term)) counts.set(term, (counts.get(term) ?? 0) + 1);
    }
    for (const term of counts.keys()) {
      documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1);
    }
    frequencies.push(counts);
    lengths.push(terms.length);
  }

  const documentCount = documents.length;
  const averageLength = Math.max(lengths.reduce((total, length) => total + length, 0) / documentCount, 1);
  const idf = new Map<string, number>();
  for (const term of queryTerms) {
    const containing = documentFrequency.get(term) ?? 0;
    idf.set(term, Math.log(1 + (documentCount - containing + 0.5) / (containing + 0.5)));
  }

  const scores = frequencies.map((counts, index) => {
    const lengthFactor = k1 * (1 - b + (b * lengths[index]!) / averageLength);
    let score = 0;
    for (const [term, frequency] of counts) {
      score += (idf.get(term)! * frequency * (k1 + 1)) / (frequency + lengthFactor);
    }
    return score;
  });
  const referenceScore = queryTerms.reduce((total, term) => total + idf.get(term)!, 0);
  return { scores, referenceScore };
}
