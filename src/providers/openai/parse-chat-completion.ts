import type { OpenAIChatCompletion } from './openai-api.js';

/**
 * A `chat.completion` body, or null when it is not one: it must be a JSON object whose `choices`
 * is a list of objects, each with a `message` object. Everything else in it passes through
 * unread.
 */
export function parseChatCompletion(payload: Buffer): OpenAIChatCompletion | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload.toString('utf8'));
  } catch {
    return null;
  }
  if (!isObject(parsed)) return null;
  const { choices } = parsed;
  if (!Array.isArray(choices)) return null;
  for (const choice of choices) {
    if (!isObject(choice) || !isObject(choice['message'])) return null;
  }
  return parsed as OpenAIChatCompletion;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
