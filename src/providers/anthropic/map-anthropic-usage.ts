import type { Usage } from '../provider-adapter.js';
import type { AnthropicUsage } from './anthropic-api.js';

/** OpenAI's `usage` object, with the cached prompt tokens OpenAI reports under `prompt_tokens_details`. */
export interface OpenAIUsagePayload {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
}

/**
 * Anthropic counts cache writes and cache reads apart from `input_tokens`; OpenAI's
 * `prompt_tokens` is every prompt token, cached or not, so the three are added.
 */
export function mapAnthropicUsage(usage: AnthropicUsage | null | undefined): OpenAIUsagePayload | null {
  if (usage === null || usage === undefined) return null;
  const input = count(usage.input_tokens);
  const output = count(usage.output_tokens);
  if (input === null && output === null) return null;
  const cacheRead = count(usage.cache_read_input_tokens) ?? 0;
  const promptTokens = (input ?? 0) + (count(usage.cache_creation_input_tokens) ?? 0) + cacheRead;
  const completionTokens = output ?? 0;
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: cacheRead },
  };
}

export function toUsage(payload: OpenAIUsagePayload): Usage {
  return {
    promptTokens: payload.prompt_tokens,
    completionTokens: payload.completion_tokens,
    totalTokens: payload.total_tokens,
    cachedTokens: payload.prompt_tokens_details.cached_tokens,
  };
}

function count(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null;
}
