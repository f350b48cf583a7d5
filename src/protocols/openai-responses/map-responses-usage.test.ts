import { describe, expect, it } from 'vitest';
import { responsesUsage as toUsage } from './responses-usage.js';
import { toChatUsage } from './map-responses-usage.js';

describe('Responses usage', () => {
  const usage = {
    input_tokens: 120,
    input_tokens_details: { cached_tokens: 100 },
    output_tokens: 40,
    output_tokens_details: { reasoning_tokens: 32 },
    total_tokens: 160,
  };

  it('carries the counts over to chat usage, cached and reasoning tokens included in their totals', () => {
    expect(toChatUsage(usage)).toEqual({
      prompt_tokens: 120,
      completion_tokens: 40,
      total_tokens: 160,
      prompt_tokens_details: { cached_tokens: 100 },
      completion_tokens_details: { reasoning_tokens: 32 },
    });
  });

  it('records the details only when the upstream gave them', () => {
    expect(toUsage(usage)).toEqual({ promptTokens: 120, completionTokens: 40, totalTokens: 160, cachedTokens: 100, reasoningTokens: 32 });
    expect(toUsage({ input_tokens: 5, output_tokens: 2 })).toEqual({ promptTokens: 5, completionTokens: 2, totalTokens: 7 });
    expect(toChatUsage({ input_tokens: 5, output_tokens: 2 })).toMatchObject({
      total_tokens: 7,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
  });

  it('is null when there is nothing to count, and ignores values that are not counts', () => {
    for (const value of [null, undefined, 'usage', [], {}, { total_tokens: 3 }, { input_tokens: -1, output_tokens: 'x' }]) {
      expect(toChatUsage(value)).toBeNull();
      expect(toUsage(value)).toBeNull();
    }
    expect(toUsage({ input_tokens: 5, input_tokens_details: { cached_tokens: -3 }, output_tokens: 1, total_tokens: Number.NaN })).toEqual({
      promptTokens: 5,
      completionTokens: 1,
      totalTokens: 6,
    });
  });
});
