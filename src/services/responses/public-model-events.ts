import { withNestedPublicModel } from '../public-model-name.js';

const LINE_FEED = 0x0a;
const CARRIAGE_RETURN = 0x0d;
/** Only the events that carry a whole Response (created, in_progress, completed, …) name the model. */
const RESPONSE_KEY = Buffer.from('"response"');

/**
 * An upstream's Responses event stream with the `model` of each event's `response` set to the
 * public id. Bytes pass as they came except those lines: complete lines are handed on at once, a
 * line still arriving is held until its end (the client could not use half an event anyway), and
 * only a block of lines holding `"response"` is decoded and spliced.
 */
export async function* withPublicModelEvents(body: AsyncIterable<Buffer>, publicId: string): AsyncGenerator<Buffer> {
  let held: Buffer | null = null;
  for await (const chunk of body) {
    const bytes: Buffer = held === null ? chunk : Buffer.concat([held, chunk]);
    const end = afterLastLineEnd(bytes);
    if (end === 0) {
      held = bytes;
      continue;
    }
    held = end === bytes.length ? null : bytes.subarray(end);
    yield withPublicModelLines(end === bytes.length ? bytes : bytes.subarray(0, end), publicId);
  }
  if (held !== null) yield withPublicModelLines(held, publicId);
}

function afterLastLineEnd(bytes: Buffer): number {
  return Math.max(bytes.lastIndexOf(LINE_FEED), bytes.lastIndexOf(CARRIAGE_RETURN)) + 1;
}

/** Complete lines, with the `data:` lines that carry a Response rewritten. */
function withPublicModelLines(lines: Buffer, publicId: string): Buffer {
  if (lines.indexOf(RESPONSE_KEY) === -1) return lines;
  const text = lines.toString('utf8');
  let out = '';
  let copied = 0;
  let found = text.indexOf('"response"');
  while (found !== -1) {
    const lineStart = Math.max(text.lastIndexOf('\n', found), text.lastIndexOf('\r', found)) + 1;
    let lineEnd = text.length;
    for (const ending of ['\n', '\r']) {
      const at = text.indexOf(ending, found);
      if (at !== -1 && at < lineEnd) lineEnd = at;
    }
    if (text.startsWith('data:', lineStart)) {
      const jsonStart = lineStart + 5;
      const json = text.slice(jsonStart, lineEnd);
      const replaced = withNestedPublicModel(json, 'response', publicId);
      if (replaced !== json) {
        out += text.slice(copied, jsonStart) + replaced;
        copied = lineEnd;
      }
    }
    found = text.indexOf('"response"', lineEnd);
  }
  return copied === 0 ? lines : Buffer.from(out + text.slice(copied), 'utf8');
}
