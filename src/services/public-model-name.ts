const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

/**
 * `json` (one JSON object's text) with its top-level `model` string set to `publicId`; the text
 * unchanged when it has none or already says it. Callers see the model id they asked for, never
 * an upstream's name for it (an Azure deployment, a dated snapshot, a vendor's path).
 *
 * The text is spliced, not parsed and written again: the scan stops at the key, which upstreams
 * put among the first fields of each chunk, so a stream pays a few dozen characters a chunk.
 */
export function withPublicModel(json: string, publicId: string): string {
  return publicModelWriter(publicId)(json);
}

/** `withPublicModel` for one model, made once for a stream's many chunks. */
export function publicModelWriter(publicId: string): (json: string) => string {
  const replacement = JSON.stringify(publicId);
  return (json) => {
    const span = topLevelStringValue(json, 'model');
    if (span === null) return json;
    if (span.end - span.start === replacement.length && json.startsWith(replacement, span.start)) return json;
    return json.slice(0, span.start) + replacement + json.slice(span.end);
  };
}

/**
 * The same for bytes: a chat completion or Response object as the upstream sent it. The bytes are
 * read as latin1, one character a byte, so that the span found is where the bytes are and only
 * the model's bytes are replaced: nothing else is decoded or encoded again. JSON's structure is
 * ASCII, which UTF-8 never uses inside a multi-byte character.
 */
export function payloadWithPublicModel(payload: Uint8Array, publicId: string): Uint8Array {
  const bytes = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  const span = topLevelStringValue(bytes.toString('latin1'), 'model');
  if (span === null) return payload;
  const replacement = quotedBytes(publicId);
  if (bytes.subarray(span.start, span.end).equals(replacement)) return payload;
  return Buffer.concat([bytes.subarray(0, span.start), replacement, bytes.subarray(span.end)]);
}

/** `publicId` as the JSON string that replaces an upstream's model name, in UTF-8. */
export function quotedBytes(publicId: string): Buffer {
  return Buffer.from(JSON.stringify(publicId), 'utf8');
}

/**
 * Where the `model` string of the object under the top-level `key` of `json` is (quotes
 * included): a Responses stream event's `response` (`{"type":"response.created","response":{…,"model":…}}`).
 * Null when there is none, also when `json` is cut before it ends.
 */
export function nestedModelSpan(json: string, key: string): { start: number; end: number } | null {
  const objectStart = topLevelValueStart(json, key, 0);
  if (objectStart === -1 || json.charCodeAt(objectStart) !== OPEN_BRACE) return null;
  return topLevelStringValue(json, 'model', objectStart);
}

/** `json` with the `model` string of the object under its top-level `key` set to `publicId`. */
export function withNestedPublicModel(json: string, key: string, publicId: string): string {
  const span = nestedModelSpan(json, key);
  if (span === null) return json;
  return json.slice(0, span.start) + JSON.stringify(publicId) + json.slice(span.end);
}

/**
 * Where the value of `key` in the object opening at `from` starts and ends (quotes included),
 * when it is a string; null otherwise. Strings are skipped whole, so a key inside a string or a
 * nested object is never taken for it.
 */
export function topLevelStringValue(json: string, key: string, from = 0): { start: number; end: number } | null {
  const start = topLevelValueStart(json, key, from);
  if (start === -1 || json.charCodeAt(start) !== QUOTE) return null;
  const end = stringEnd(json, start);
  return end === -1 ? null : { start, end: end + 1 };
}

/** The index where the value of `key` in the object opening at `from` starts; -1 when it has none. */
function topLevelValueStart(json: string, key: string, from: number): number {
  let depth = 0;
  // At depth 1, whether the next string is a key (after `{` or `,`) or a value (after `:`).
  let expectKey = false;
  for (let index = from; index < json.length; index++) {
    const code = json.charCodeAt(index);
    if (code === QUOTE) {
      const end = stringEnd(json, index);
      if (end === -1) return -1;
      if (depth === 1 && expectKey) {
        expectKey = false;
        if (end - index - 1 === key.length && json.startsWith(key, index + 1)) return afterColon(json, end + 1);
      }
      index = end;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      depth++;
      expectKey = depth === 1 && code === OPEN_BRACE;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth--;
      if (depth <= 0) return -1;
    } else if (code === COMMA && depth === 1) {
      expectKey = true;
    } else if (code === COLON && depth === 1) {
      expectKey = false;
    }
  }
  return -1;
}

/** The index of the quote that closes the string opening at `start`; -1 when it never closes. */
function stringEnd(json: string, start: number): number {
  let index = start + 1;
  for (;;) {
    const quote = json.indexOf('"', index);
    if (quote === -1) return -1;
    let backslashes = 0;
    for (let before = quote - 1; json.charCodeAt(before) === BACKSLASH; before--) backslashes++;
    if (backslashes % 2 === 0) return quote;
    index = quote + 1;
  }
}

/** The index of the first character of the value after `"key"`, skipping whitespace and the colon; -1 when malformed. */
function afterColon(json: string, from: number): number {
  let index = skipSpace(json, from);
  if (json.charCodeAt(index) !== COLON) return -1;
  index = skipSpace(json, index + 1);
  return index < json.length ? index : -1;
}

function skipSpace(json: string, from: number): number {
  let index = from;
  while (index < json.length) {
    const code = json.charCodeAt(index);
    if (code !== 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) break;
    index++;
  }
  return index;
}
