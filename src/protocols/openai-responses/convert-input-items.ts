import { GatewayError } from '../../errors/index.js';
import type { ChatMessage, ChatToolCall, ChatUserPart } from '../openai-chat/chat-types.js';
import type { ChatToolNames } from './chat-tool-names.js';
import { isObject } from '../../core/index.js';
import { refuseField } from './refuse-field.js';

/** Where an item came from, for the `param` of a refusal: `input[3]`, or the stored conversation. */
export type ItemLocation = (index: number) => string;

/**
 * Appends Responses input items to a chat conversation. Chat has one assistant message per turn,
 * holding its text and its tool calls, so consecutive assistant items (text, function calls) are
 * gathered into one; each function_call_output becomes a `tool` message. A call of a namespace's
 * function (`namespace` beside its `name`) is named as the request's tools name it in chat.
 */
export function appendInputItems(messages: ChatMessage[], items: readonly unknown[], where: ItemLocation, names: ChatToolNames): void {
  items.forEach((item, index) => appendItem(messages, item, where(index), names));
}

function appendItem(messages: ChatMessage[], item: unknown, param: string, names: ChatToolNames): void {
  if (!isObject(item)) throw refuseField(param, 'Each input item must be an object.');
  const type = item['type'] ?? (item['role'] === undefined ? 'item_reference' : 'message');
  switch (type) {
    case 'message':
      appendMessage(messages, item, param);
      return;
    case 'function_call':
      appendToolCall(messages, toolCall(item, param, names));
      return;
    case 'function_call_output':
      messages.push({ role: 'tool', tool_call_id: requiredString(item, 'call_id', param), content: toolOutput(item['output'], `${param}.output`) });
      return;
    case 'reasoning':
      // Reasoning items are another model's hidden state (often encrypted for OpenAI alone); a chat
      // upstream has no field for them, and the conversation reads the same without them.
      return;
    case 'item_reference':
      throw new GatewayError('invalid_body', `Item reference '${String(item['id'])}' was not found.`, { param });
    default:
      throw refuseField(`${param}.type`, `Input items of type '${String(type)}' cannot be sent to this model, whose upstream speaks chat completions.`);
  }
}

function appendMessage(messages: ChatMessage[], item: Record<string, unknown>, param: string): void {
  const role = item['role'];
  const content = item['content'];
  if (role === 'user') {
    messages.push({ role: 'user', content: typeof content === 'string' ? content : userParts(content, param) });
  } else if (role === 'system' || role === 'developer') {
    // Chat's `developer` role is OpenAI's own; every chat upstream knows `system`.
    messages.push({ role: 'system', content: textOf(content, param, ['input_text']) });
  } else if (role === 'assistant') {
    appendAssistantText(messages, textOf(content, param, ['output_text', 'input_text', 'refusal']));
  } else {
    throw refuseField(`${param}.role`, `Unknown message role '${String(role)}'.`);
  }
}

function appendAssistantText(messages: ChatMessage[], text: string): void {
  const last = messages.at(-1);
  // Text said after the turn's tool calls and before their results still belongs to that turn.
  if (last?.role === 'assistant' && last.tool_calls !== undefined && last.content === null) {
    last.content = text;
    return;
  }
  messages.push({ role: 'assistant', content: text });
}

function appendToolCall(messages: ChatMessage[], call: ChatToolCall): void {
  const last = messages.at(-1);
  if (last?.role === 'assistant') {
    last.tool_calls = [...(last.tool_calls ?? []), call];
    return;
  }
  messages.push({ role: 'assistant', content: null, tool_calls: [call] });
}

function toolCall(item: Record<string, unknown>, param: string, names: ChatToolNames): ChatToolCall {
  const namespace = item['namespace'];
  const name = names.chatName(requiredString(item, 'name', param), typeof namespace === 'string' ? namespace : null);
  return { id: requiredString(item, 'call_id', param), type: 'function', function: { name, arguments: requiredString(item, 'arguments', param) } };
}

function userParts(content: unknown, param: string): ChatUserPart[] {
  return contentParts(content, param).map((part, index) => {
    const partParam = `${param}.content[${index}]`;
    if (part['type'] === 'input_text') return { type: 'text', text: requiredString(part, 'text', partParam) };
    if (part['type'] === 'input_image') return imagePart(part, partParam);
    if (part['type'] === 'input_file') {
      throw refuseField(partParam, 'File inputs cannot be sent to this model, whose upstream speaks chat completions; send the text or images instead.');
    }
    throw refuseField(`${partParam}.type`, `Content of type '${String(part['type'])}' is not supported in a user message.`);
  });
}

function imagePart(part: Record<string, unknown>, param: string): ChatUserPart {
  const url = part['image_url'];
  if (typeof url !== 'string' || url === '') {
    // A file_id names a file in OpenAI's storage, which no other upstream can read.
    throw refuseField(param, 'Images must be given by image_url (a URL or a data URL); file_id images are not supported with this model.');
  }
  const detail = part['detail'];
  // Chat knows low, high and auto; Responses' `original` has no chat equivalent, so the upstream's default applies.
  return { type: 'image_url', image_url: detail === 'low' || detail === 'high' || detail === 'auto' ? { url, detail } : { url } };
}

/** The text of a message whose role carries text only; its parts are pieces of one text. */
function textOf(content: unknown, param: string, allowed: readonly string[]): string {
  if (typeof content === 'string') return content;
  return contentParts(content, param)
    .map((part, index) => {
      const type = part['type'];
      if (typeof type !== 'string' || !allowed.includes(type)) {
        throw refuseField(`${param}.content[${index}].type`, `Content of type '${String(type)}' is not supported in this message.`);
      }
      // A refusal is kept as the words the assistant said, since most upstreams have no refusal field.
      return requiredString(part, type === 'refusal' ? 'refusal' : 'text', `${param}.content[${index}]`);
    })
    .join('');
}

function toolOutput(output: unknown, param: string): string {
  if (typeof output === 'string') return output;
  if (!Array.isArray(output)) throw refuseField(param, 'A function_call_output needs an output.');
  return output
    .map((part: unknown, index) => {
      if (isObject(part) && part['type'] === 'input_text') return requiredString(part, 'text', `${param}[${index}]`);
      // Chat `tool` messages carry text only.
      throw refuseField(`${param}[${index}]`, 'Only text can be returned from a function call to this model.');
    })
    .join('');
}

function contentParts(content: unknown, param: string): Record<string, unknown>[] {
  if (!Array.isArray(content)) throw refuseField(`${param}.content`, 'Message content must be a string or a list of parts.');
  return content.map((part: unknown, index) => {
    if (!isObject(part)) throw refuseField(`${param}.content[${index}]`, 'Each content part must be an object.');
    return part;
  });
}

function requiredString(item: Record<string, unknown>, field: string, param: string): string {
  const value = item[field];
  if (typeof value !== 'string') throw refuseField(`${param}.${field}`, `${field} must be a string.`);
  return value;
}
