/** Tokens a call used, as the upstream reported them or the gateway estimated them. */
export interface Usage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** Of the prompt tokens, those read from the upstream's prompt cache, when it says. */
  cachedTokens?: number;
  /** Of the prompt tokens, those written to the upstream's prompt cache, when it says (Anthropic's `cache_creation_input_tokens`). */
  cacheWriteTokens?: number;
  /** Of the completion tokens, those spent on reasoning, when the upstream says. */
  reasoningTokens?: number;
}
