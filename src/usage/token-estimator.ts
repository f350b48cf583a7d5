import type { Usage } from '../providers/provider-adapter.js';
import { countTokens } from './tokenizer.js';

// OpenAI's published accounting for chat prompts: each message costs 3 tokens of framing, a
// name 1 more, and the reply is primed with 3.
const TOKENS_PER_MESSAGE = 3;
const TOKENS_PER_NAME = 1;
const REPLY_PRIMING_TOKENS = 3;

/** Tokens of embedding inputs (token arrays count their length), when an upstream reports none. */
export async function estimateEmbeddingTokens(inputs: ReadonlyArray<string | readonly number[]>): Promise<number> {
  let total = 0;
  for (const input of inputs) total += typeof input === 'string' ? await countTokens(input) : input.length;
  return total;
}

/**
 * Usage counted with o200k_base when an upstream reports none. Text and tool definitions are
 * counted; images and audio parts are not, so the figure is a lower bound for multimodal prompts.
 * The counting gives the event loop a turn now and then (see tokenizer.ts), so an estimate of a
 * huge prompt never stalls other requests.
 */
export async function estimateChatUsage(body: Record<string, unknown>, completionText: string): Promise<Usage> {
  let promptTokens = REPLY_PRIMING_TOKENS;
  const messages = Array.isArray(body['messages']) ? body['messages'] : [];
  for (const message of messages) {
    if (message === null || typeof message !== 'object') continue;
    const { role, content, name, tool_calls: toolCalls } = message as Record<string, unknown>;
    promptTokens += TOKENS_PER_MESSAGE;
    if (typeof role === 'string') promptTokens += await countTokens(role);
    promptTokens += await countTokens(contentText(content));
    if (typeof name === 'string') promptTokens += TOKENS_PER_NAME + (await countTokens(name));
    if (toolCalls !== undefined) promptTokens += await countTokens(JSON.stringify(toolCalls));
  }
  if (body['tools'] !== undefined) promptTokens += await countTokens(JSON.stringify(body['tools']));
  const completionTokens = completionText === '' ? 0 : await countTokens(completionText);
  return { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens };
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const part of content) {
    if (part !== null && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string') {
      text += (part as { text: string }).text;
    }
  }
  return text;
}
