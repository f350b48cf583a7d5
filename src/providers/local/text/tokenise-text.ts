/**
 * The tokeniser shared by the embedder and BM25. It mirrors how GloVe's vocabulary was made
 * (Stanford tokenizer, lowercased): words keep inner hyphens ("well-known" is a GloVe word),
 * contractions become their full words (GloVe's own "n't"/"'s" pieces are absent from this
 * package), punctuation is dropped, and emoji and symbols ("$", "%", "€") are tokens of their own.
 *
 * Output tokens are lowercase, NFKC-normalised and contain no whitespace.
 */

/**
 * In priority order: dotted initialisms ("u.s.", "e.g."), numbers with separators ("3.14",
 * "1,000"; plain digits go with words so "1990s" and "mp3" stay whole), words with inner apostrophes or hyphens, emoji sequences (ZWJ, skin tones, keycaps,
 * flags), then any other single symbol; "%", "&", "@" and "#" are Unicode punctuation but
 * GloVe words that carry meaning ("50%", "R&D"), so they count as symbols too.
 */
const TOKEN_PATTERN = new RegExp(
  [
    String.raw`\p{L}(?:\.\p{L})+(?![\p{L}\p{N}])\.?`,
    String.raw`\p{N}+(?:[.,]\p{N}+)+`,
    String.raw`[\p{L}\p{M}\p{N}]+(?:['\-][\p{L}\p{M}\p{N}]+)*`,
    String.raw`\p{Regional_Indicator}{2}`,
    String.raw`\p{Extended_Pictographic}(?:[\u{1F3FB}-\u{1F3FF}\uFE0F\u20E3]|\u200D\p{Extended_Pictographic})*`,
    String.raw`[\p{S}%&@#]`,
  ].join('|'),
  'gu',
);

const APOSTROPHES = /[\u2018\u2019\u02BC\u0060\u00B4]/g;
const INITIALISM = /^\p{L}(?:\.\p{L})+\.?$/u;

/** Irregular negations, whose stem is not the word before "n't". */
const IRREGULAR_NEGATIONS: ReadonlyMap<string, readonly string[]> = new Map([
  ["can't", ['can', 'not']],
  ["won't", ['will', 'not']],
  ["shan't", ['shall', 'not']],
  ["ain't", ['is', 'not']],
]);

/** Clitic suffixes and what they stand for; "'s" (possessive or "is") carries nothing. */
const CLITICS: readonly (readonly [string, readonly string[]])[] = [
  ["n't", ['not']],
  ["'re", ['are']],
  ["'ve", ['have']],
  ["'ll", ['will']],
  ["'d", ['would']],
  ["'m", ['am']],
  ["'s", []],
];

function expandContraction(token: string): readonly string[] {
  const irregular = IRREGULAR_NEGATIONS.get(token);
  if (irregular !== undefined) return irregular;
  for (const [suffix, expansion] of CLITICS) {
    if (token.endsWith(suffix) && token.length > suffix.length) {
      const stem = token.slice(0, -suffix.length);
      return [stem, ...expansion];
    }
  }
  return [token];
}

export function tokeniseText(text: string): string[] {
  const normalised = text.normalize('NFKC').toLowerCase().replace(APOSTROPHES, "'");
  const tokens: string[] = [];
  for (const match of normalised.matchAll(TOKEN_PATTERN)) {
    const token = match[0];
    if (INITIALISM.test(token)) {
      tokens.push(token.replaceAll('.', ''));
    } else if (token.includes("'")) {
      for (const piece of expandContraction(token)) tokens.push(piece);
    } else {
      tokens.push(token);
    }
  }
  return tokens;
}

/** Removes accents ("café" → "cafe"): this GloVe vocabulary is ASCII apart from a few symbols. */
export function stripDiacritics(token: string): string {
  return token.normalize('NFKD').replace(/\p{M}/gu, '');
}
