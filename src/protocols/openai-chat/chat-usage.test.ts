import { describe, expect, it } from 'vitest';
import { readChatUsage } from './chat-usage.js';

describe('readChatUsage', () => {
  it('reads the counts and the details OpenAI reports', () => {
    expect(
      readChatUsage({
        prompt_tokens: 2_006,
        completion_tokens: 300,
        total_tokens: 2_306,
        prompt_tokens_details: { cached_tokens: 1_920 },
        completion_tokens_details: { reasoning_tokens: 256 },
      }),
    ).toEqual({ promptTokens: 2_006, completionTokens: 300, totalTokens: 2_306, cachedTokens: 1_920, reasoningTokens: 256 });
  });

  it('adds the total when it is missing, leaves out the details not given or nonsense, and is null without counts', () => {
    expect(
      readChatUsage({ prompt_tokens: 10, completion_tokens: 5, prompt_tokens_details: null, completion_tokens_details: { reasoning_tokens: -1 } }),
    ).toEqual({
      promptTokens: 10,
      completionTokens: 5,
      totalTokens: 15,
    });
    expect(readChatUsage({ completion_tokens: 3 })).toEqual({ promptTokens: 0, completionTokens: 3, totalTokens: 3 });
    expect(readChatUsage({ total_tokens: 3 })).toBeNull();
    expect(readChatUsage(null)).toBeNull();
    expect(readChatUsage([1, 2])).toBeNull();
  });
});
