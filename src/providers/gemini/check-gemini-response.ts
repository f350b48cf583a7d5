import { isObject } from '../../core/index.js';
import type { JsonGuard } from '../shared/json-guard.js';
import type { GeminiGenerateContentResponse } from './gemini-api.js';

/**
 * Whether a parsed body has the shape of a `GenerateContentResponse` as far as the gateway reads
 * it: candidates (if any) are objects, their content's parts (if any) are objects, a function
 * call is an object. The converters can then read it without meeting a value of another type.
 */
export function isGenerateContentResponse(value: unknown): value is GeminiGenerateContentResponse {
  return hasReadableShape(value);
}

/**
 * A whole (non-streamed) answer: besides the shape, it has candidates, or says why the prompt was
 * blocked. Stream events may carry only usage; a whole answer with neither answered nothing.
 */
export const GENERATE_CONTENT_ANSWER: JsonGuard<GeminiGenerateContentResponse> = {
  expected: 'a GenerateContentResponse',
  unparsed: 'JSON',
  test: isCompleteGenerateContentResponse,
};

function isCompleteGenerateContentResponse(value: unknown): value is GeminiGenerateContentResponse {
  if (!hasReadableShape(value)) return false;
  const { candidates, promptFeedback } = value as GeminiGenerateContentResponse;
  return (Array.isArray(candidates) && candidates.length > 0) || typeof promptFeedback?.blockReason === 'string';
}

function hasReadableShape(value: unknown): boolean {
  if (!isObject(value)) return false;
  const { candidates, promptFeedback, usageMetadata } = value;
  if (!optionalObject(promptFeedback) || !optionalObject(usageMetadata)) return false;
  if (candidates === undefined || candidates === null) return true;
  if (!Array.isArray(candidates)) return false;
  return candidates.every((candidate) => {
    if (!isObject(candidate)) return false;
    const { content } = candidate;
    if (content === undefined || content === null) return true;
    if (!isObject(content)) return false;
    const { parts } = content;
    if (parts === undefined || parts === null) return true;
    return Array.isArray(parts) && parts.every((part) => isObject(part) && optionalObject(part['functionCall']));
  });
}

function optionalObject(value: unknown): boolean {
  return value === undefined || value === null || isObject(value);
}
