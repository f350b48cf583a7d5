import type { ChatHistoryItem } from 'node-llama-cpp';
import { LocalEngineError } from '../local-engine-error.js';

export interface LocalChatMessage {
  role: string;
  content: unknown;
}

/**
 * Turns OpenAI chat messages into node-llama-cpp's history, ending with the empty model turn the
 * model is asked to fill. Message text stays plain text: node-llama-cpp never parses special
 * tokens (such as `<|im_start|>`) inside it, so a user cannot forge turns.
 */
export function toChatHistory(messages: readonly LocalChatMessage[]): ChatHistoryItem[] {
  if (messages.length === 0) throw new LocalEngineError('invalid_request', 'messages must not be empty');
  const history: ChatHistoryItem[] = messages.map((message, index) => {
    const text = messageText(message.content, index);
    switch (message.role) {
      case 'system':
      case 'developer':
        return { type: 'system', text };
      case 'user':
        return { type: 'user', text };
      case 'assistant':
        return { type: 'model', response: [text] };
      default:
        throw new LocalEngineError(
          'invalid_request',
          `messages[${index}].role '${String(message.role)}' is not supported by local models (use system, user or assistant)`,
        );
    }
  });
  history.push({ type: 'model', response: [] });
  return history;
}

function messageText(content: unknown, index: number): string {
  if (typeof content === 'string') return content;
  if (content === null || content === undefined) return '';
  if (!Array.isArray(content)) {
    throw new LocalEngineError('invalid_request', `messages[${index}].content must be a string or an array of text parts`);
  }
  return content
    .map((part: unknown, partIndex) => {
      if (isTextPart(part)) return part.text;
      const type = typeof part === 'object' && part !== null && 'type' in part ? String(part.type) : typeof part;
      throw new LocalEngineError('invalid_request', `messages[${index}].content[${partIndex}] has type '${type}'; local chat models accept only text parts`);
    })
    .join('');
}

function isTextPart(part: unknown): part is { type: 'text'; text: string } {
  return typeof part === 'object' && part !== null && 'type' in part && part.type === 'text' && 'text' in part && typeof part.text === 'string';
}
