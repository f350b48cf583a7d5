import { maskSecrets } from '../core/index.js';

/**
 * Longest unfinished event held back to be looked at whole. An error event is a few hundred bytes;
 * a longer one (a completed response with a long output) is passed on as it is once past this.
 */
const MAX_HELD_BYTES = 1024 * 1024;

/** An event's end: a blank line, in each line ending the SSE format allows. */
const EVENT_ENDS = ['\n\n', '\r\r', '\r\n\r\n'] as const;

/** What only an event that carries an upstream's error text contains (OpenAI writes `event:` lines; the type is in the data too). */
const ERROR_MARKS = ['event: error', 'event:error', '"type":"error"', '"type": "error"', 'response.failed'] as const;
const ERROR_EVENT = /^event:\s?(?:error|response\.failed)\s*$|"type"\s*:\s*"(?:error|response\.failed)"/m;
const EVENT_SEPARATOR = /(\r\n\r\n|\n\n|\r\r)/;

/**
 * An upstream's Responses event stream passed on byte for byte, except the events that carry its
 * error text (`error`, `response.failed`): in those, what looks like a key or a token is masked
 * as it is for operators (core/mask-secrets.ts). Pieces are passed on up to the last event end
 * they contain, and an unfinished event waits for its end (a client can do nothing with half an
 * event anyway), so an event is always looked at whole. Finding the ends and the marks are byte
 * searches; only a stretch that holds an error event is decoded, and only an error event rewritten.
 */
export async function* maskedErrorEvents(pieces: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  let held: Buffer[] = [];
  let heldBytes = 0;
  for await (const piece of pieces) {
    const end = lastEventEnd(piece, held.at(-1));
    if (end === -1 && heldBytes + piece.length <= MAX_HELD_BYTES) {
      held.push(piece);
      heldBytes += piece.length;
      continue;
    }
    const cut = end === -1 ? piece.length : end;
    const complete = held.length === 0 ? piece.subarray(0, cut) : Buffer.concat([...held, piece.subarray(0, cut)]);
    held = cut === piece.length ? [] : [piece.subarray(cut)];
    heldBytes = piece.length - cut;
    if (complete.length > 0) yield masked(complete);
  }
  if (heldBytes > 0) yield masked(Buffer.concat(held));
}

/** Where the last event that ends in `piece` ends (an index into `piece`), or -1; `before` is the held piece it follows. */
function lastEventEnd(piece: Buffer, before: Buffer | undefined): number {
  let end = -1;
  for (const mark of EVENT_ENDS) {
    const at = piece.lastIndexOf(mark);
    if (at !== -1) end = Math.max(end, at + mark.length);
  }
  if (end !== -1 || before === undefined) return end;
  // An end cut across two pieces: the last bytes held and the first of this one.
  const tail = before.subarray(-3).toString('latin1');
  const seam = tail + piece.subarray(0, 3).toString('latin1');
  for (const mark of EVENT_ENDS) {
    const at = seam.indexOf(mark, Math.max(0, tail.length - mark.length + 1));
    if (at !== -1) end = Math.max(end, at + mark.length - tail.length);
  }
  return end;
}

/** Whole events; those carrying error text with their secrets masked. */
function masked(events: Buffer): Buffer {
  if (!ERROR_MARKS.some((mark) => events.includes(mark))) return events;
  const text = events.toString('utf8');
  const parts = text.split(EVENT_SEPARATOR);
  let changed = false;
  for (let index = 0; index < parts.length; index += 2) {
    const event = parts[index] as string;
    if (!ERROR_EVENT.test(event)) continue;
    const safe = maskedEvent(event);
    if (safe === event) continue;
    parts[index] = safe;
    changed = true;
  }
  return changed ? Buffer.from(parts.join('')) : events;
}

/**
 * One error event with its secrets masked. Its JSON is read and its strings masked, so that a key
 * behind an escape (`\\nsk-…`, `\\u0020sk-…`) is found as the upstream's client would read it;
 * only this event is written again. An event whose data is not JSON is masked as text.
 */
function maskedEvent(event: string): string {
  const lines = event.split(/\r\n|\r|\n/);
  const data = lines.filter((line) => line.startsWith('data:')).map((line) => line.slice(line.startsWith('data: ') ? 6 : 5));
  let parsed: unknown;
  try {
    parsed = JSON.parse(data.join('\n'));
  } catch {
    return maskSecrets(event);
  }
  const masked = maskStrings(parsed);
  if (masked === parsed) return event;
  const kept = lines.filter((line) => !line.startsWith('data:'));
  return [...kept, `data: ${JSON.stringify(masked)}`].join('\n');
}

/** The value with every string in it masked; the same value when nothing changed. */
function maskStrings(value: unknown): unknown {
  if (typeof value === 'string') return maskSecrets(value);
  if (Array.isArray(value)) {
    const items = value.map(maskStrings);
    return items.some((item, index) => item !== value[index]) ? items : value;
  }
  if (value === null || typeof value !== 'object') return value;
  let changed = false;
  const entries = Object.entries(value).map(([name, item]) => {
    const masked = maskStrings(item);
    if (masked !== item) changed = true;
    return [name, masked] as const;
  });
  return changed ? Object.fromEntries(entries) : value;
}
