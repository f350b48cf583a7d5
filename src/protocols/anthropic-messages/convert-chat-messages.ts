import { asObject, type JsonObject } from '../../core/index.js';
import { GatewayError } from '../../errors/index.js';
import type { AnthropicContentBlock, AnthropicMessage, AnthropicTextBlock } from './messages-types.js';

export interface ConvertedMessages {
  /** System and developer messages, in order, joined by a blank line; undefined when there are none. */
  system: string | undefined;
  messages: AnthropicMessage[];
}

/**
 * OpenAI chat messages as Anthropic's `system` plus alternating user/assistant messages.
 * Anthropic refuses two messages of the same role in a row, so neighbours of one role are merged;
 * `tool` messages become `tool_result` blocks of a user message for the same reason.
 */
export function convertToAnthropicMessages(openAIMessages: readonly unknown[]): ConvertedMessages {
  const systemParts: string[] = [];
  const messages: AnthropicMessage[] = [];

  const append = (role: AnthropicMessage['role'], content: AnthropicContentBlock[]): void => {
    const last = messages[messages.length - 1];
    if (last !== undefined && last.role === role) last.content.push(...content);
    else messages.push({ role, content });
  };

  openAIMessages.forEach((value, index) => {
    const message = asObject(value) ?? {};
    const where = `messages[${index}]`;
    switch (message['role']) {
      case 'system':
      case 'developer':
        systemParts.push(textOf(message['content'], `${where}.content`));
        break;
      case 'user':
        append('user', userContent(message['content'], `${where}.content`));
        break;
      case 'assistant':
        append('assistant', assistantContent(message, where));
        break;
      case 'tool':
        append('user', [
          {
            type: 'tool_result',
            tool_use_id: typeof message['tool_call_id'] === 'string' ? message['tool_call_id'] : '',
            content: toolResultContent(message['content'], `${where}.content`),
          },
        ]);
        break;
      default:
        // The deprecated `function` role has no call id, which Anthropic's tool_result needs.
        throw new GatewayError(
          'invalid_body',
          `Messages with role ${JSON.stringify(message['role'])} cannot be sent to an Anthropic model; use tool messages.`,
          {
            param: `${where}.role`,
          },
        );
    }
  });

  return { system: systemParts.length > 0 ? systemParts.join('\n\n') : undefined, messages };
}

function userContent(content: unknown, where: string): AnthropicContentBlock[] {
  if (typeof content === 'string') return textBlocks(content);
  if (!Array.isArray(content)) return [];
  return content.flatMap((value, index): AnthropicContentBlock[] => {
    const part = asObject(value) ?? {};
    const partWhere = `${where}[${index}]`;
    if (part['type'] === 'text') return textBlocks(typeof part['text'] === 'string' ? part['text'] : '');
    if (part['type'] === 'image_url') return [imageBlock(part['image_url'], partWhere)];
    throw new GatewayError('invalid_body', `Content parts of type ${JSON.stringify(part['type'])} cannot be sent to an Anthropic model.`, { param: partWhere });
  });
}

function imageBlock(imageUrl: unknown, where: string): AnthropicContentBlock {
  const url = typeof imageUrl === 'string' ? imageUrl : asObject(imageUrl)?.['url'];
  if (typeof url !== 'string') throw new GatewayError('invalid_body', 'An image_url part needs a url.', { param: `${where}.image_url.url` });
  const dataUrl = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (dataUrl !== null) return { type: 'image', source: { type: 'base64', media_type: dataUrl[1] as string, data: dataUrl[2] as string } };
  if (/^https?:\/\//i.test(url)) return { type: 'image', source: { type: 'url', url } };
  throw new GatewayError('invalid_body', 'An image url must be an http(s) URL or a base64 data: URL.', { param: `${where}.image_url.url` });
}

function assistantContent(message: JsonObject, where: string): AnthropicContentBlock[] {
  const content = message['content'];
  // Refusal parts are text the assistant said; Anthropic has no separate kind for them.
  const blocks: AnthropicContentBlock[] =
    typeof content === 'string' || Array.isArray(content) ? textBlocks(textOf(content, `${where}.content`, ['text', 'refusal'])) : [];
  const toolCalls = message['tool_calls'];
  if (Array.isArray(toolCalls)) {
    toolCalls.forEach((value, index) => {
      const call = asObject(value) ?? {};
      const callWhere = `${where}.tool_calls[${index}]`;
      const calledFunction = asObject(call['function']) ?? {};
      blocks.push({
        type: 'tool_use',
        id: typeof call['id'] === 'string' ? call['id'] : '',
        name: typeof calledFunction['name'] === 'string' ? calledFunction['name'] : '',
        input: parseArguments(calledFunction['arguments'], `${callWhere}.function.arguments`),
      });
    });
  }
  return blocks;
}

/** Anthropic takes the tool input as an object; OpenAI carries it as a JSON string. */
function parseArguments(value: unknown, where: string): unknown {
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) return {};
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    throw new GatewayError('invalid_body', 'Tool call arguments must be JSON to be sent to an Anthropic model.', { param: where });
  }
}

function toolResultContent(content: unknown, where: string): string | AnthropicTextBlock[] {
  if (typeof content === 'string') return content;
  return textBlocks(textOf(content, where));
}

/** The text of a string or of an array of text parts, parts joined without separator as OpenAI does. */
function textOf(content: unknown, where: string, kinds: readonly string[] = ['text']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((value, index) => {
      const part = asObject(value) ?? {};
      const kind = part['type'];
      if (typeof kind === 'string' && kinds.includes(kind)) {
        const text = part[kind === 'refusal' ? 'refusal' : 'text'];
        return typeof text === 'string' ? text : '';
      }
      throw new GatewayError('invalid_body', `Content parts of type ${JSON.stringify(kind)} are not allowed here.`, { param: `${where}[${index}]` });
    })
    .join('');
}

/** Anthropic refuses empty text blocks, so empty text becomes no block at all. */
function textBlocks(text: string): AnthropicTextBlock[] {
  return text === '' ? [] : [{ type: 'text', text }];
}
