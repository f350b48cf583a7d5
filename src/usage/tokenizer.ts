import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * Counts o200k_base tokens; stops as soon as the count passes `limit` (and returns that count).
 * Asynchronous: a long text is counted in slices, and the event loop runs between them.
 */
export type CountTokens = (text: string, limit?: number) => Promise<number>;

/** Longest piece handed to the BPE at once: its merge loop is quadratic in a piece's length. */
const LONGEST_PIECE = 256;
/** Text handed to the encoder at once when it has no long runs (about 0.3 ms of work). */
const SLICE_LENGTH = 16 * 1024;
/** Event-loop time one count may take before it lets other work run. */
const SLICE_BUDGET_MS = 8;
/**
 * One maximal run of characters of a class the o200k pre-tokenizer keeps together: letters
 * (with their marks), other symbols, white space, digits. Its pieces never cross a run by more
 * than a leading space or symbol, so cutting text between runs leaves them unchanged.
 */
const RUN = /[\p{L}\p{M}]+|[^\s\p{L}\p{N}]+|\s+|\p{N}+/uy;

type Encode = (text: string) => number;
let loading: Promise<Encode> | null = null;

/**
 * gpt-tokenizer's o200k_base. Its tables cost ~150 ms and tens of MB, so they load on first use,
 * not at start. Special-token text (`<|endoftext|>`) in a caller's input is counted as the text it
 * is, never refused.
 */
function loadEncoder(): Promise<Encode> {
  loading ??= import('gpt-tokenizer/encoding/o200k_base').then((module) => {
    const options = { disallowedSpecial: new Set<string>() };
    return (text: string) => module.countTokens(text, options);
  });
  return loading;
}

/**
 * Tokens of `text` in time linear in its length, whatever it holds: the BPE cost of a run of one
 * character (150,000 `a`) grows with the square of the run, so runs longer than LONGEST_PIECE are
 * counted in pieces of that size (an estimate within a token per piece; ordinary text has no such
 * runs and is counted exactly). The event loop is given a turn every SLICE_BUDGET_MS.
 */
export const countTokens: CountTokens = async (text, limit = Number.POSITIVE_INFINITY) => {
  const encode = await loadEncoder();
  let total = 0;
  let sliceStarted = performance.now();
  for (const segment of segments(text)) {
    total += encode(segment);
    if (total > limit) return total;
    if (performance.now() - sliceStarted > SLICE_BUDGET_MS) {
      await nextTurn();
      sliceStarted = performance.now();
    }
  }
  return total;
};

/** `text` cut between runs into slices of about SLICE_LENGTH, and long runs into pieces. */
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
    } else if (end - sliceStart > SLICE_LENGTH && position > sliceStart) {
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
