import { isObject, type Usage } from '../../core/index.js';
import type { ResponseUsage } from './responses-types.js';

export interface ConvertedUsage {
  /** For the Response object. */
  response: ResponseUsage;
  /** For the request record. */
  usage: Usage;
}

/**
 * A chat completion's `usage` in the Responses API's terms. Null when the upstream gave none
 * (the service then estimates it, as for chat). `cache_write_tokens` is required by the published
 * schema but chat usage has no such field; a few upstreams send one under `prompt_tokens_details`.
 */
export function convertChatUsage(value: unknown): ConvertedUsage | null {
  if (!isObject(value)) return null;
  const input = count(value['prompt_tokens']);
  const output = count(value['completion_tokens']);
  if (input === undefined && output === undefined) return null;
  const inputTokens = input ?? 0;
  const outputTokens = output ?? 0;
  const totalTokens = count(value['total_tokens']) ?? inputTokens + outputTokens;
  const promptDetails = isObject(value['prompt_tokens_details']) ? value['prompt_tokens_details'] : {};
  const completionDetails = isObject(value['completion_tokens_details']) ? value['completion_tokens_details'] : {};
  const cached = count(promptDetails['cached_tokens']);
  const reasoning = count(completionDetails['reasoning_tokens']);
  const usage: Usage = { promptTokens: inputTokens, completionTokens: outputTokens, totalTokens };
  if (cached !== undefined) usage.cachedTokens = cached;
  if (reasoning !== undefined) usage.reasoningTokens = reasoning;
  return {
    response: {
      input_tokens: inputTokens,
      input_tokens_details: { cached_tokens: cached ?? 0, cache_write_tokens: count(promptDetails['cache_write_tokens']) ?? 0 },
      output_tokens: outputTokens,
      output_tokens_details: { reasoning_tokens: reasoning ?? 0 },
      total_tokens: totalTokens,
    },
    usage,
  };
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}
