import { isObject } from '../../core/index.js';
import type { JsonGuard } from '../shared/json-guard.js';
import type { OpenAIChatCompletion } from './openai-api.js';

/**
 * A `chat.completion` body: a JSON object whose `choices` is a list of objects, each with a
 * `message` object. Everything else in it passes through unread.
 */
export const CHAT_COMPLETION: JsonGuard<OpenAIChatCompletion> = {
  expected: 'a chat completion',
  test: isChatCompletion,
};

function isChatCompletion(value: unknown): value is OpenAIChatCompletion {
  if (!isObject(value)) return false;
  const { choices } = value;
  if (!Array.isArray(choices)) return false;
  for (const choice of choices) {
    if (!isObject(choice) || !isObject(choice['message'])) return false;
  }
  return true;
}
