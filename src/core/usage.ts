/** Tokens a call used, as the upstream reported them or the gateway estimated them. */
export interface Usage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}
