import type { OpenAIUsage } from './openai-api.js';

const USAGE_KEY = Buffer.from('"usage"');
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * The `usage` object of a chat completion, read without parsing the whole body: OpenAI-compatible
 * servers put it last, so the last `"usage"` key is found and only its object is parsed.
 * Returns undefined when that shortcut does not apply; the caller then parses the whole body.
 */
export function extractUsage(body: Buffer): OpenAIUsage | null | undefined {
  const key = body.lastIndexOf(USAGE_KEY);
  if (key === -1) return null;
  let index = key + USAGE_KEY.length;
  while (index < body.length && body[index] !== OPEN_BRACE) {
    const byte = body[index] as number;
    // Only `:` and white space may stand between the key and its object; `null` or anything else means no shortcut.
    if (byte !== 0x3a && byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) return undefined;
    index++;
  }
  const start = index;
  let depth = 0;
  let inString = false;
  for (; index < body.length; index++) {
    const byte = body[index];
    if (inString) {
      if (byte === BACKSLASH) index++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) inString = true;
    else if (byte === OPEN_BRACE) depth++;
    else if (byte === CLOSE_BRACE && --depth === 0) {
      try {
        return JSON.parse(body.toString('utf8', start, index + 1)) as OpenAIUsage;
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}
