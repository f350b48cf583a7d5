import { isObject, type Usage } from '../../core/index.js';
import type { ConvertedUsage } from './convert-chat-usage.js';

/**
 * A Responses API `usage` object as the gateway records it; null when it gives no counts. The API
 * counts as chat completions does (`input_tokens` includes the cached ones, `output_tokens` the
 * reasoning ones), so the numbers carry over as they are; the details only when it gave them.
 * Read defensively: it is whatever the upstream sent.
 */
export function responsesUsage(value: unknown): Usage | null {
  if (!isObject(value)) return null;
  const input = count(value['input_tokens']);
  const output = count(value['output_tokens']);
  if (input === undefined && output === undefined) return null;
  const promptTokens = input ?? 0;
  const completionTokens = output ?? 0;
  const usage: Usage = { promptTokens, completionTokens, totalTokens: count(value['total_tokens']) ?? promptTokens + completionTokens };
  const cached = isObject(value['input_tokens_details']) ? count(value['input_tokens_details']['cached_tokens']) : undefined;
  const reasoning = isObject(value['output_tokens_details']) ? count(value['output_tokens_details']['reasoning_tokens']) : undefined;
  if (cached !== undefined) usage.cachedTokens = cached;
  if (reasoning !== undefined) usage.reasoningTokens = reasoning;
  return usage;
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** An upstream's Responses `usage` as the gateway's Response says it and the request record keeps it; null when it gives no counts. */
export function convertResponsesUsage(value: unknown): ConvertedUsage | null {
  const usage = responsesUsage(value);
  if (usage === null || !isObject(value)) return null;
  const inputDetails = isObject(value['input_tokens_details']) ? value['input_tokens_details'] : {};
  return {
    response: {
      input_tokens: usage.promptTokens,
      input_tokens_details: { cached_tokens: usage.cachedTokens ?? 0, cache_write_tokens: count(inputDetails['cache_write_tokens']) ?? 0 },
      output_tokens: usage.completionTokens,
      output_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
      total_tokens: usage.totalTokens,
    },
    usage,
  };
}
