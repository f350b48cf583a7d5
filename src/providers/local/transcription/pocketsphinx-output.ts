export interface RecognizedWord {
  word: string;
  start: number;
  end: number;
}

// With `-time yes` every utterance prints its hypothesis line, then one line per token:
// "<word> <start seconds> <end seconds> <posterior probability>". Hypothesis lines are ignored: the
// timed tokens carry the same words plus the timings.
const TIMED_TOKEN_LINE = /^(\S+) (\d+(?:\.\d+)?) (\d+(?:\.\d+)?) (?:-?\d+(?:\.\d+)?(?:e[-+]?\d+)?|nan|-?inf)$/i;
// Alternative pronunciations are numbered in the dictionary: "read(2)" is the word "read".
const PRONUNCIATION_VARIANT = /\(\d+\)$/;

/** The spoken words, with fillers (<s>, </s>, <sil>, [NOISE], ++BREATH++, …) removed. */
export function parsePocketsphinxOutput(standardOutput: string): RecognizedWord[] {
  const words: RecognizedWord[] = [];
  for (const line of standardOutput.split('\n')) {
    const match = TIMED_TOKEN_LINE.exec(line.trim());
    if (match === null) continue;
    const [, token = '', start = '0', end = '0'] = match;
    if (isFiller(token)) continue;
    const word = token.replace(PRONUNCIATION_VARIANT, '');
    if (word === '') continue;
    words.push({ word, start: Number(start), end: Number(end) });
  }
  return words;
}

function isFiller(token: string): boolean {
  return token.startsWith('<') || token.startsWith('[') || token.startsWith('+');
}
