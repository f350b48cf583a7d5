import { nestedModelSpan, quotedBytes } from './public-model-name.js';

const LINE_FEED = 0x0a;
const CARRIAGE_RETURN = 0x0d;
/**
 * The most of one line held back to rewrite it. A Response (or a message) names its model among
 * its first fields, before its output; a longer line (a completed response with a large output)
 * is handed on as it arrives once this much of it, rewritten, has gone.
 */
const MAX_HELD_LINE_BYTES = 1024 * 1024;

/**
 * An upstream's event stream with the `model` of the object under each event's `key` set to the
 * public id: `response` in a Responses stream (the events that carry a whole Response: created,
 * in_progress, completed…), `message` in a Messages stream (`message_start`). Bytes pass as they
 * came except those lines: complete lines are handed on at once, a line still arriving is held
 * until its end or MAX_HELD_LINE_BYTES, and only lines holding `"<key>"` are searched and spliced.
 */
export async function* withPublicModelEvents(body: AsyncIterable<Buffer>, publicId: string, key: 'response' | 'message' = 'response'): AsyncGenerator<Buffer> {
  const replacement = quotedBytes(publicId);
  const keyBytes = Buffer.from(`"${key}"`);
  const rewrite = (lines: Buffer): Buffer => withPublicModelLines(lines, replacement, key, keyBytes);
  let held: Buffer[] = [];
  let heldBytes = 0;
  // Inside a line too long to hold: its bytes go on as they come, up to its end.
  let passing = false;
  for await (const chunk of body) {
    let rest = chunk;
    if (passing) {
      const lineEnd = afterFirstLineEnd(rest);
      if (lineEnd === 0) {
        yield rest;
        continue;
      }
      yield rest.subarray(0, lineEnd);
      passing = false;
      rest = rest.subarray(lineEnd);
    }
    const end = afterLastLineEnd(rest);
    if (end > 0) {
      const complete = end === rest.length ? rest : rest.subarray(0, end);
      yield rewrite(held.length === 0 ? complete : Buffer.concat([...held, complete]));
      held = [];
      heldBytes = 0;
    }
    if (end === rest.length) continue;
    held.push(rest.subarray(end));
    heldBytes += rest.length - end;
    if (heldBytes > MAX_HELD_LINE_BYTES) {
      yield rewrite(Buffer.concat(held));
      held = [];
      heldBytes = 0;
      passing = true;
    }
  }
  if (held.length > 0) yield rewrite(Buffer.concat(held));
}

function afterLastLineEnd(bytes: Buffer): number {
  return Math.max(bytes.lastIndexOf(LINE_FEED), bytes.lastIndexOf(CARRIAGE_RETURN)) + 1;
}

function afterFirstLineEnd(bytes: Buffer): number {
  const feed = bytes.indexOf(LINE_FEED);
  const carriage = bytes.indexOf(CARRIAGE_RETURN);
  if (feed === -1) return carriage + 1;
  return (carriage === -1 ? feed : Math.min(feed, carriage)) + 1;
}

/**
 * Lines (the last one maybe cut short) with the `data:` lines that carry an object under `key` rewritten.
 * Read as latin1, one character a byte, so only the model's bytes are replaced and a UTF-8
 * character cut at the end stays as it came.
 */
function withPublicModelLines(lines: Buffer, replacement: Buffer, key: string, keyBytes: Buffer): Buffer {
  if (lines.indexOf(keyBytes) === -1) return lines;
  const text = lines.toString('latin1');
  const quotedKey = `"${key}"`;
  const parts: Buffer[] = [];
  let copied = 0;
  let found = text.indexOf(quotedKey);
  while (found !== -1) {
    const lineStart = Math.max(text.lastIndexOf('\n', found), text.lastIndexOf('\r', found)) + 1;
    const lineEnd = lineEndFrom(text, found);
    if (text.startsWith('data:', lineStart)) {
      const jsonStart = lineStart + 5;
      const span = nestedModelSpan(text.slice(jsonStart, lineEnd), key);
      if (span !== null && !lines.subarray(jsonStart + span.start, jsonStart + span.end).equals(replacement)) {
        parts.push(lines.subarray(copied, jsonStart + span.start), replacement);
        copied = jsonStart + span.end;
      }
    }
    found = text.indexOf(quotedKey, lineEnd);
  }
  if (copied === 0) return lines;
  parts.push(lines.subarray(copied));
  return Buffer.concat(parts);
}

function lineEndFrom(text: string, from: number): number {
  const feed = text.indexOf('\n', from);
  const carriage = text.indexOf('\r', from);
  if (feed === -1) return carriage === -1 ? text.length : carriage;
  return carriage === -1 ? feed : Math.min(feed, carriage);
}
