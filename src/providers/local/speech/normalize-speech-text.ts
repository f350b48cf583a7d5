/**
 * Flite's English front end reads ASCII. Typographic punctuation would otherwise be dropped
 * (losing the pause a dash or ellipsis should give) and accented letters read oddly, so both are
 * brought to their plain forms; anything else non-ASCII (emoji, other scripts) is left for Flite
 * to skip.
 */
const PUNCTUATION_REPLACEMENTS: ReadonlyArray<readonly [RegExp, string]> = [
  [/[\u2018\u2019\u201A\u201B\u2032]/g, "'"],
  [/[\u201C\u201D\u201E\u201F\u2033\u00AB\u00BB]/g, '"'],
  [/[\u2010-\u2015\u2212]/g, ' - '],
  [/\u2026/g, '...'],
  [/[\u00A0\u2000-\u200B\u202F\u205F\u3000]/g, ' '],
];

export function normalizeSpeechText(text: string): string {
  let normalized = text;
  for (const [pattern, replacement] of PUNCTUATION_REPLACEMENTS) normalized = normalized.replace(pattern, replacement);
  // Decompose accented letters and drop the combining marks: "café" → "cafe".
  return normalized.normalize('NFKD').replace(/[\u0300-\u036f]/g, '');
}
