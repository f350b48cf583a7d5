import type { Usage } from '../provider-adapter.js';
import type { OpenAIToolCallDelta, OpenAIUsage } from './openai-api.js';

export function mapOpenAIUsage(usage: OpenAIUsage | null | undefined): Usage | null {
  if (usage === null || usage === undefined || typeof usage !== 'object') return null;
  const promptTokens = nonNegative(usage.prompt_tokens);
  const completionTokens = nonNegative(usage.completion_tokens);
  if (promptTokens === null && completionTokens === null) return null;
  const prompt = promptTokens ?? 0;
  const completion = completionTokens ?? 0;
  const mapped: Usage = { promptTokens: prompt, completionTokens: completion, totalTokens: nonNegative(usage.total_tokens) ?? prompt + completion };
  // The details are what a session's cache hits and a reasoning model's thinking are read from (request log, console).
  const cached = nonNegative(usage.prompt_tokens_details?.cached_tokens);
  const reasoning = nonNegative(usage.completion_tokens_details?.reasoning_tokens);
  if (cached !== null) mapped.cachedTokens = cached;
  if (reasoning !== null) mapped.reasoningTokens = reasoning;
  return mapped;
}

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

function nonNegative(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null;
}
