export interface WordErrorCount {
  /** Substitutions + deletions + insertions on the cheapest alignment. */
  errors: number;
  /** Words in the normalised reference. */
  referenceWords: number;
  /** errors / referenceWords; 0 for two empty texts, 1 per inserted word for an empty reference. */
  rate: number;
}

/** Lower-case words with punctuation dropped, so "Hello, World!" and "hello world" compare equal. */
export function normalizeWords(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[’‘]/g, "'")
    .replace(/[^\p{L}\p{N}'\s]+/gu, ' ')
    .split(/\s+/)
    .map((word) => word.replace(/^'+|'+$/g, ''))
    .filter((word) => word !== '');
}

/** Word error rate of `hypothesis` against `reference`: word-level Levenshtein over normalised words. */
export function wordErrorRate(reference: string, hypothesis: string): WordErrorCount {
  const expected = normalizeWords(reference);
  const actual = normalizeWords(hypothesis);
  // One rolling row of the edit-distance matrix: previous[j] = distance(expected[0..i), actual[0..j)).
  let previous = Array.from({ length: actual.length + 1 }, (_, index) => index);
  for (let row = 1; row <= expected.length; row += 1) {
    const current = [row];
    for (let column = 1; column <= actual.length; column += 1) {
      const substitution = (previous[column - 1] ?? 0) + (expected[row - 1] === actual[column - 1] ? 0 : 1);
      const deletion = (previous[column] ?? 0) + 1;
      const insertion = (current[column - 1] ?? 0) + 1;
      current.push(Math.min(substitution, deletion, insertion));
    }
    previous = current;
  }
  const errors = previous[actual.length] ?? 0;
  const rate = expected.length === 0 ? errors : errors / expected.length;
  return { errors, referenceWords: expected.length, rate };
}
