import secureJson from 'secure-json-parse';
import { bodyErrors } from './error-response.js';

/**
 * Deepest nesting of objects and arrays a JSON body may have. Real requests stay far below it
 * (OpenAI's structured outputs allow 10 levels of schema); a deeper body exists only to blow the
 * stack of whatever walks it later (JSON.stringify, validators, converters).
 */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/**
 * The one JSON body parser of every route, whichever server layer read the bytes: empty and
 * too-deep bodies are refused before parsing, and `__proto__` / `constructor.prototype` keys
 * after it.
 */
export function parseJsonBody(bytes: Buffer): unknown {
  if (bytes.length === 0) throw bodyErrors.empty();
  if (nestingDepthExceeds(bytes, MAX_JSON_DEPTH)) throw bodyErrors.tooDeep(MAX_JSON_DEPTH);
  try {
    return secureJson.parse(bytes.toString('utf8'), null, { protoAction: 'error', constructorAction: 'error' });
  } catch (error) {
    throw bodyErrors.notJson((error as Error).message);
  }
}

/**
 * Whether brackets nest deeper than `limit` outside strings, read over the raw bytes in one pass:
 * the characters that matter are ASCII, which never occur inside a multi-byte UTF-8 sequence.
 * Invalid JSON is left for the parser to name.
 */
export function nestingDepthExceeds(bytes: Uint8Array, limit: number): boolean {
  let depth = 0;
  for (let index = 0; index < bytes.length; index++) {
    const byte = bytes[index];
    if (byte === QUOTE) {
      index = closingQuote(bytes, index + 1);
      if (index === -1) return false;
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/**
 * Where the string that starts at `from` ends, found with the native byte search (strings are most
 * of a large body): a quote closes it unless an odd number of backslashes stands before it.
 */
function closingQuote(bytes: Uint8Array, from: number): number {
  for (let quote = bytes.indexOf(QUOTE, from); quote !== -1; quote = bytes.indexOf(QUOTE, quote + 1)) {
    let backslashes = 0;
    while (quote - backslashes - 1 >= from && bytes[quote - backslashes - 1] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote;
  }
  return -1;
}
