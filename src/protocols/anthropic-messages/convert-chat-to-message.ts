import { randomBytes } from 'node:crypto';
import { isObject, parseJson } from '../../core/index.js';
import { readChatUsage } from '../openai-chat/chat-usage.js';
import type { MessageContentBlock, MessageObject } from './messages-types.js';
import { messagesUsageOf } from './messages-usage.js';
import { stopReasonOf } from './stop-reason.js';

/** A message id in Anthropic's shape (`msg_` and 24 letters and digits). */
export function randomMessageId(): string {
  return `msg_${randomBytes(18).toString('base64url').replace(/[-_]/g, 'x')}`;
}

/**
 * A chat completion (parsed, whatever the upstream sent) as a Messages API message: its text as a
 * text block, its tool calls as tool_use blocks (arguments parsed: Anthropic's `input` is an
 * object), its finish reason as a stop reason and its usage as Anthropic counts it.
 */
export function chatCompletionToMessage(completion: unknown, model: string, id: string = randomMessageId()): MessageObject {
  const root = isObject(completion) ? completion : {};
  const choices = Array.isArray(root['choices']) ? (root['choices'] as unknown[]) : [];
  const choice = choices.find((value) => isObject(value) && (value['index'] ?? 0) === 0);
  const message = isObject(choice) && isObject(choice['message']) ? choice['message'] : {};
  const content: MessageContentBlock[] = [];
  const text = textOf(message['content']) + (typeof message['refusal'] === 'string' ? message['refusal'] : '');
  if (text !== '') content.push({ type: 'text', text });
  const calls = Array.isArray(message['tool_calls']) ? (message['tool_calls'] as unknown[]) : [];
  for (const call of calls) {
    if (!isObject(call)) continue;
    const called = isObject(call['function']) ? call['function'] : {};
    content.push({
      type: 'tool_use',
      id: typeof call['id'] === 'string' ? call['id'] : randomToolUseId(),
      name: typeof called['name'] === 'string' ? called['name'] : '',
      input: toolInput(called['arguments']),
    });
  }
  return {
    id,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stopReasonOf(isObject(choice) && typeof choice['finish_reason'] === 'string' ? choice['finish_reason'] : null),
    stop_sequence: null,
    usage: messagesUsageOf(readChatUsage(root['usage'])),
  };
}

/** A tool call's arguments as Anthropic's `input` object; arguments that are not a JSON object are kept under `arguments`, not lost. */
export function toolInput(value: unknown): Record<string, unknown> {
  if (typeof value !== 'string' || value.trim() === '') return {};
  const parsed = parseJson(value);
  return isObject(parsed) ? parsed : { arguments: value };
}

export function randomToolUseId(): string {
  return `toolu_${randomBytes(18).toString('base64url').replace(/[-_]/g, 'x')}`;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (isObject(part) && typeof part['text'] === 'string' ? part['text'] : '')).join('');
}
