import { randomBytes } from 'node:crypto';
import type { ChatStreamEvent, Usage } from '../provider-adapter.js';
import type { LocalChatOutcome } from './chat/llama-chat-engine.js';

/** The OpenAI wire shapes a local chat model answers with, so clients cannot tell it from a remote one. */

export function completionId(): string {
  return `chatcmpl-${randomBytes(12).toString('base64url')}`;
}

export function outcomeUsage(outcome: LocalChatOutcome): Usage {
  return { promptTokens: outcome.promptTokens, completionTokens: outcome.completionTokens, totalTokens: outcome.promptTokens + outcome.completionTokens };
}

export function completionPayload(id: string, model: string, created: number, outcome: LocalChatOutcome): Uint8Array {
  const usage = outcomeUsage(outcome);
  return Buffer.from(
    JSON.stringify({
      id,
      object: 'chat.completion',
      created,
      model,
      choices: [{ index: 0, message: { role: 'assistant', content: outcome.text, refusal: null }, logprobs: null, finish_reason: outcome.finishReason }],
      usage: { prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens, total_tokens: usage.totalTokens },
      system_fingerprint: null,
    }),
  );
}

/** One `chat.completion.chunk` event; the first carries the role, the last the finish reason, a final one only usage. */
export function chunkEvent(id: string, model: string, created: number, delta: Record<string, string>, finishReason: string | null): ChatStreamEvent {
  return {
    data: JSON.stringify({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      system_fingerprint: null,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    }),
    usage: null,
    usageOnly: false,
    text: delta['content'] ?? '',
  };
}

export function usageEvent(id: string, model: string, created: number, outcome: LocalChatOutcome): ChatStreamEvent {
  const usage = outcomeUsage(outcome);
  return {
    data: JSON.stringify({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      system_fingerprint: null,
      choices: [],
      usage: { prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens, total_tokens: usage.totalTokens },
    }),
    usage,
    usageOnly: true,
    text: '',
  };
}
