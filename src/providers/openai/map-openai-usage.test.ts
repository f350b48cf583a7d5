import { describe, expect, it } from 'vitest';
import { mapOpenAIUsage } from './map-openai-usage.js';

describe('mapOpenAIUsage', () => {
  it('keeps the cached prompt tokens and the reasoning tokens OpenAI reports in the details', () => {
    expect(
      mapOpenAIUsage({
        prompt_tokens: 2_006,
        completion_tokens: 300,
        total_tokens: 2_306,
        prompt_tokens_details: { cached_tokens: 1_920 },
        completion_tokens_details: { reasoning_tokens: 256 },
      }),
    ).toEqual({ promptTokens: 2_006, completionTokens: 300, totalTokens: 2_306, cachedTokens: 1_920, reasoningTokens: 256 });
  });

  it('leaves them out when the upstream does not say (many OpenAI-compatible servers), or says nonsense', () => {
    expect(mapOpenAIUsage({ prompt_tokens: 10, completion_tokens: 5 })).toEqual({ promptTokens: 10, completionTokens: 5, totalTokens: 15 });
    expect(
      mapOpenAIUsage({ prompt_tokens: 10, completion_tokens: 5, prompt_tokens_details: null, completion_tokens_details: { reasoning_tokens: -1 } }),
    ).toEqual({
      promptTokens: 10,
      completionTokens: 5,
      totalTokens: 15,
    });
  });
});
