import type { Usage } from '../provider-adapter.js';
import type { GeminiUsageMetadata } from './gemini-api.js';

/** OpenAI's `usage` object, with the detail fields OpenAI clients read. */
export interface OpenAIUsageObject {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
  completion_tokens_details?: { reasoning_tokens: number };
}

/**
 * Gemini's `usageMetadata` as OpenAI usage. Thinking tokens are billed as output, so they count as
 * completion tokens (and are reported as reasoning tokens); tokens of tool-use prompts (search
 * results, code execution) count as prompt tokens. Recorded totals equal the sum of all four.
 */
export function mapGeminiUsage(metadata: GeminiUsageMetadata | null | undefined): OpenAIUsageObject | null {
  if (metadata === null || metadata === undefined || typeof metadata !== 'object') return null;
  const prompt = count(metadata.promptTokenCount);
  const candidates = count(metadata.candidatesTokenCount);
  const thoughts = count(metadata.thoughtsTokenCount);
  const toolUse = count(metadata.toolUsePromptTokenCount);
  if (prompt === undefined && candidates === undefined && thoughts === undefined) return null;
  const promptTokens = (prompt ?? 0) + (toolUse ?? 0);
  const completionTokens = (candidates ?? 0) + (thoughts ?? 0);
  const cached = count(metadata.cachedContentTokenCount);
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: count(metadata.totalTokenCount) ?? promptTokens + completionTokens,
    ...(cached === undefined ? {} : { prompt_tokens_details: { cached_tokens: cached } }),
    ...(thoughts === undefined ? {} : { completion_tokens_details: { reasoning_tokens: thoughts } }),
  };
}

export function toUsage(usage: OpenAIUsageObject | null): Usage | null {
  if (usage === null) return null;
  const mapped: Usage = { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens, totalTokens: usage.total_tokens };
  if (usage.prompt_tokens_details !== undefined) mapped.cachedTokens = usage.prompt_tokens_details.cached_tokens;
  if (usage.completion_tokens_details !== undefined) mapped.reasoningTokens = usage.completion_tokens_details.reasoning_tokens;
  return mapped;
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}
