import type { Usage } from '../core/index.js';
import { countTokens } from './tokenizer.js';

// OpenAI's published accounting for chat prompts: each message costs 3 tokens of framing, a
// name 1 more, and the reply is primed with 3.
const TOKENS_PER_MESSAGE = 3;
const TOKENS_PER_NAME = 1;
const REPLY_PRIMING_TOKENS = 3;

/** Tokens of embedding inputs (token arrays count their length), when an upstream reports none. */
export async function estimateEmbeddingTokens(inputs: ReadonlyArray<string | readonly number[]>): Promise<number> {
  const texts: string[] = [];
  let arrayTokens = 0;
  for (const input of inputs) {
    if (typeof input === 'string') texts.push(input);
    else arrayTokens += input.length;
  }
  return arrayTokens + (texts.length === 0 ? 0 : await countTokens(texts));
}

/**
 * Usage counted with o200k_base when an upstream reports none. Text and tool definitions are
 * counted; images and audio parts are not, so the figure is a lower bound for multimodal prompts.
 * The counting runs on the tokenizer thread (see tokenizer.ts), never on the event loop.
 */
export async function estimateChatUsage(body: Record<string, unknown>, completionText: string): Promise<Usage> {
  let framing = REPLY_PRIMING_TOKENS;
  const texts: string[] = [];
  const messages = Array.isArray(body['messages']) ? body['messages'] : [];
  for (const message of messages) {
    if (message === null || typeof message !== 'object') continue;
    const { role, content, name, tool_calls: toolCalls } = message as Record<string, unknown>;
    framing += TOKENS_PER_MESSAGE;
    if (typeof role === 'string') texts.push(role);
    texts.push(contentText(content));
    if (typeof name === 'string') {
      framing += TOKENS_PER_NAME;
      texts.push(name);
    }
    if (toolCalls !== undefined) texts.push(JSON.stringify(toolCalls));
  }
  if (body['tools'] !== undefined) texts.push(JSON.stringify(body['tools']));
  const [promptText, completionTokens] = await Promise.all([countTokens(texts), completionText === '' ? 0 : countTokens(completionText)]);
  const promptTokens = framing + promptText;
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
