import type { OpenAIToolCallDelta } from './openai-api.js';

/** The text a message or delta generates, tool call arguments included: all of it is billed as output. */
export function generatedText(
  part: { content?: string | null; refusal?: string | null; tool_calls?: Array<OpenAIToolCallDelta | null> | null } | null | undefined,
): string {
  if (part === null || typeof part !== 'object') return '';
  let text = typeof part.content === 'string' ? part.content : '';
  if (typeof part.refusal === 'string') text += part.refusal;
  if (Array.isArray(part.tool_calls)) {
    // Read defensively: this runs on whatever an upstream sent, after the answer is out.
    for (const call of part.tool_calls) {
      const name = call?.function?.name;
      const args = call?.function?.arguments;
      if (typeof name === 'string') text += name;
      if (typeof args === 'string') text += args;
    }
  }
  return text;
}
