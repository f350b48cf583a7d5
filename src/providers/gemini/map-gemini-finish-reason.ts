export type OpenAIFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

const CONTENT_FILTER_REASONS = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT']);

/**
 * Gemini's `finishReason` as OpenAI's `finish_reason`. Gemini says STOP after a function call,
 * so a candidate that called a function finishes with `tool_calls`. Reasons OpenAI has no word for
 * (MALFORMED_FUNCTION_CALL, LANGUAGE, OTHER, …) end normally as `stop`.
 */
export function mapGeminiFinishReason(finishReason: string | null | undefined, calledFunction: boolean): OpenAIFinishReason {
  if (finishReason === 'MAX_TOKENS') return 'length';
  if (finishReason !== null && finishReason !== undefined && CONTENT_FILTER_REASONS.has(finishReason)) return 'content_filter';
  return calledFunction ? 'tool_calls' : 'stop';
}
