/** Longest piece handed to the BPE at once: its merge loop is quadratic in a piece's length. */
export const LONGEST_PIECE = 256;
/** Text handed to the encoder at once when it has no long runs, so that a count can stop at its limit. */
const SLICE_LENGTH = 16 * 1024;
const SPACE = 0x20;
/**
 * One maximal run of characters of a class the o200k pre-tokenizer keeps together: letters
 * (with their marks), other symbols, white space, digits. Its pieces never cross a run by more
 * than a leading space or symbol, so cutting text between runs leaves them unchanged.
 */
const RUN = /[\p{L}\p{M}]+|[^\s\p{L}\p{N}]+|\s+|\p{N}+/uy;

/**
 * Tokens of `text` in time linear in its length, whatever it holds, stopping once past `limit`.
 * The BPE cost of a run of one character (150,000 `a`) grows with the square of the run, so runs
 * longer than LONGEST_PIECE are counted in pieces of that size: an estimate within about a token
 * per piece, where ordinary text, which has no such runs, is counted exactly.
 */
export function countInSegments(encode: (text: string) => number, text: string, limit = Number.POSITIVE_INFINITY): number {
  let total = 0;
  for (const segment of segments(text)) {
    total += encode(segment);
    if (total > limit) return total;
  }
  return total;
}

/** `text` cut before spaces into slices of about SLICE_LENGTH, and long runs into pieces. */
export function* segments(text: string): Generator<string> {
  if (text.length <= LONGEST_PIECE) {
    if (text.length > 0) yield text;
    return;
  }
  const run = new RegExp(RUN.source, RUN.flags);
  let sliceStart = 0;
  let position = 0;
  while (position < text.length) {
    run.lastIndex = position;
    const end = run.exec(text) === null ? position + 1 : run.lastIndex;
    if (end - position > LONGEST_PIECE) {
      if (position > sliceStart) yield text.slice(sliceStart, position);
      yield* pieces(text, position, end);
      sliceStart = end;
    } else if (end - sliceStart > SLICE_LENGTH && position > sliceStart && text.charCodeAt(position) === SPACE) {
      // Before a space: a piece may start with one (` fox`) but never ends with one.
      yield text.slice(sliceStart, position);
      sliceStart = position;
    }
    position = end;
  }
  if (sliceStart < text.length) yield text.slice(sliceStart);
}

function* pieces(text: string, start: number, end: number): Generator<string> {
  for (let from = start; from < end; ) {
    let to = Math.min(from + LONGEST_PIECE, end);
    // Never between the two halves of a surrogate pair.
    if (to < end && isLowSurrogate(text.charCodeAt(to))) to++;
    yield text.slice(from, to);
    from = to;
  }
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
