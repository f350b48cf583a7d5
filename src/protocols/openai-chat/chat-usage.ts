import { isObject, type Usage } from '../../core/index.js';

/**
 * A chat completion's `usage` as the gateway records it; null when it gives no counts. The
 * details (cached prompt tokens, reasoning tokens) only when the upstream gave them: many
 * OpenAI-compatible servers do not. Read defensively: it is whatever the upstream sent.
 */
export function readChatUsage(value: unknown): Usage | null {
  if (!isObject(value)) return null;
  const promptTokens = count(value['prompt_tokens']);
  const completionTokens = count(value['completion_tokens']);
  if (promptTokens === undefined && completionTokens === undefined) return null;
  const prompt = promptTokens ?? 0;
  const completion = completionTokens ?? 0;
  const usage: Usage = { promptTokens: prompt, completionTokens: completion, totalTokens: count(value['total_tokens']) ?? prompt + completion };
  const cached = isObject(value['prompt_tokens_details']) ? count(value['prompt_tokens_details']['cached_tokens']) : undefined;
  const reasoning = isObject(value['completion_tokens_details']) ? count(value['completion_tokens_details']['reasoning_tokens']) : undefined;
  if (cached !== undefined) usage.cachedTokens = cached;
  if (reasoning !== undefined) usage.reasoningTokens = reasoning;
  return usage;
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}
