import type { Usage } from '../provider-adapter.js';
import type { ResponsesUsage } from './responses-api.js';

/** OpenAI's chat `usage` object, with the details its clients read. */
export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
  completion_tokens_details: { reasoning_tokens: number };
}

/**
 * A response's usage as chat usage. The Responses API counts the way chat completions does:
 * `input_tokens` already includes the cached ones and `output_tokens` the reasoning ones, so the
 * numbers carry over as they are. Null when the upstream reported no counts at all.
 */
export function toChatUsage(value: unknown): ChatUsage | null {
  const usage = asUsage(value);
  if (usage === null) return null;
  const input = count(usage.input_tokens);
  const output = count(usage.output_tokens);
  if (input === undefined && output === undefined) return null;
  const promptTokens = input ?? 0;
  const completionTokens = output ?? 0;
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: count(usage.total_tokens) ?? promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: count(usage.input_tokens_details?.cached_tokens) ?? 0 },
    completion_tokens_details: { reasoning_tokens: count(usage.output_tokens_details?.reasoning_tokens) ?? 0 },
  };
}

/** A response's usage as the gateway records it; the details only when the upstream gave them. */
export function toUsage(value: unknown): Usage | null {
  const chat = toChatUsage(value);
  const usage = asUsage(value);
  if (chat === null || usage === null) return null;
  const cached = count(usage.input_tokens_details?.cached_tokens);
  const reasoning = count(usage.output_tokens_details?.reasoning_tokens);
  return {
    promptTokens: chat.prompt_tokens,
    completionTokens: chat.completion_tokens,
    totalTokens: chat.total_tokens,
    ...(cached === undefined ? {} : { cachedTokens: cached }),
    ...(reasoning === undefined ? {} : { reasoningTokens: reasoning }),
  };
}

/** Read defensively: it is whatever the upstream sent. */
function asUsage(value: unknown): ResponsesUsage | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as ResponsesUsage) : null;
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}
