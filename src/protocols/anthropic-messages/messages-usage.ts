import type { Usage } from '../../core/index.js';
import type { AnthropicUsage, MessagesUsage } from './messages-types.js';

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

/**
 * Anthropic's usage as the gateway records it: every prompt token in `promptTokens` (input, cache
 * writes and cache reads, as for OpenAI), the reads in `cachedTokens`, the writes in
 * `cacheWriteTokens` (priced apart: docs/limits.md). Null when it gives no counts.
 */
export function anthropicUsage(usage: AnthropicUsage | null | undefined): Usage | null {
  const payload = mapAnthropicUsage(usage);
  if (payload === null) return null;
  return {
    promptTokens: payload.prompt_tokens,
    completionTokens: payload.completion_tokens,
    totalTokens: payload.total_tokens,
    cachedTokens: payload.prompt_tokens_details.cached_tokens,
    cacheWriteTokens: count(usage?.cache_creation_input_tokens) ?? 0,
  };
}

function count(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null;
}

/**
 * The gateway's usage as a message's: Anthropic's `input_tokens` excludes the prompt tokens read
 * from the cache, OpenAI's `prompt_tokens` includes them, so they are taken off. Unknown usage
 * (the upstream said none) is said as zeros, the shape the clients require.
 */
export function messagesUsageOf(usage: Usage | null): MessagesUsage {
  if (usage === null) return { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const cacheRead = Math.min(usage.cachedTokens ?? 0, usage.promptTokens);
  const cacheWrite = Math.min(usage.cacheWriteTokens ?? 0, usage.promptTokens - cacheRead);
  return {
    input_tokens: usage.promptTokens - cacheRead - cacheWrite,
    output_tokens: usage.completionTokens,
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cacheRead,
  };
}

/** Adds the counts `usage` has to `into`; later counts replace earlier ones, as `message_delta`'s are cumulative. */
export function mergeAnthropicUsage(into: AnthropicUsage, usage: unknown): void {
  if (typeof usage !== 'object' || usage === null) return;
  const counts = usage as Record<string, unknown>;
  for (const key of ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'] as const) {
    const value = counts[key];
    if (typeof value === 'number') into[key] = value;
  }
}
