import { isObject, type Usage } from '../../core/index.js';
import { readChatUsage } from '../openai-chat/chat-usage.js';
import type { ResponseUsage } from './responses-types.js';

export interface ConvertedUsage {
  /** For the Response object. */
  response: ResponseUsage;
  /** For the request record. */
  usage: Usage;
}

/**
 * A chat completion's `usage` in the Responses API's terms, read as chat reads it
 * (openai-chat/chat-usage.ts). Null when the upstream gave none (the service then estimates it,
 * as for chat). `cache_write_tokens` is required by the published schema but chat usage has no
 * such field; a few upstreams send one under `prompt_tokens_details`.
 */
export function convertChatUsage(value: unknown): ConvertedUsage | null {
  const usage = readChatUsage(value);
  if (usage === null || !isObject(value)) return null;
  const promptDetails = isObject(value['prompt_tokens_details']) ? value['prompt_tokens_details'] : {};
  const cacheWrites = promptDetails['cache_write_tokens'];
  return {
    response: {
      input_tokens: usage.promptTokens,
      input_tokens_details: {
        cached_tokens: usage.cachedTokens ?? 0,
        cache_write_tokens: typeof cacheWrites === 'number' && Number.isFinite(cacheWrites) && cacheWrites >= 0 ? cacheWrites : 0,
      },
      output_tokens: usage.completionTokens,
      output_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
      total_tokens: usage.totalTokens,
    },
    usage,
  };
}
