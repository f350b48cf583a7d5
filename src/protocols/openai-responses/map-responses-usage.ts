import type { ChatUsage } from '../openai-chat/chat-types.js';
import { responsesUsage } from './responses-usage.js';

/**
 * A response's usage as chat usage: the counts carry over as they are (responses-usage.ts says why), the details as 0 when the upstream gave none, as chat clients expect them. Null when
 * the upstream reported no counts at all.
 */
export function toChatUsage(value: unknown): ChatUsage | null {
  const usage = responsesUsage(value);
  if (usage === null) return null;
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.totalTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedTokens ?? 0 },
    completion_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
  };
}
