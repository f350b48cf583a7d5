import { asObject, isObject, type JsonObject } from '../../core/index.js';
import type { ChatMessage, ChatRequestBody, ChatToolCall, ChatUserPart } from '../openai-chat/chat-types.js';
import { refuseField } from '../openai-responses/refuse-field.js';
import { convertMessagesTools } from './convert-messages-tools.js';
import type { MessagesRequestBody } from './messages-types.js';

export interface MessagesChatConversion {
  /** A chat completions request body; `model` is still the client's, for the service to replace. */
  body: ChatRequestBody;
  /** The request's fields (and tools) a chat upstream is not sent, none of which changes the answer's meaning: for a log line. */
  dropped: string[];
}

/**
 * Request fields a chat upstream has no equivalent for, whose absence leaves the answer correct:
 * `thinking` (the model answers without showing its reasoning), `context_management` (earlier
 * tool results stay in the context instead of being cleared), `top_k`, `metadata`, prompt-cache
 * controls (chat upstreams cache by themselves, or not), and Anthropic's service and region choices.
 */
const DROPPED_FIELDS = [
  'thinking',
  'context_management',
  'top_k',
  'metadata',
  'cache_control',
  'service_tier',
  'inference_geo',
  'speed',
  'diagnostics',
  'user_profile_id',
  'workspace_id',
] as const;

/** Fields only Anthropic can honour, which would change what the answer is: refused, naming them. */
const REFUSED_FIELDS: Readonly<Record<string, string>> = {
  mcp_servers: 'MCP servers are run by Anthropic; this model is served over a chat completions upstream, which cannot reach them.',
  container: "Containers are Anthropic's code execution sandboxes; this model is served over a chat completions upstream, which has none.",
};

/**
 * A Messages request as a chat completions request, for an upstream that speaks only chat. The
 * system prompt becomes a system message, content blocks become chat content parts, `tool_use`
 * blocks tool calls and `tool_result` blocks tool messages; `max_tokens`, `stop_sequences`,
 * `temperature`, `top_p`, `tools`, `tool_choice` and `output_config.format` keep their meaning.
 * What a chat upstream cannot do and would change the answer is refused with a 400 naming it.
 */
export function messagesToChat(request: MessagesRequestBody): MessagesChatConversion {
  for (const [field, reason] of Object.entries(REFUSED_FIELDS)) {
    if (request[field] !== undefined && request[field] !== null) throw refuseField(field, reason);
  }
  const dropped: string[] = DROPPED_FIELDS.filter((field) => request[field] !== undefined && request[field] !== null);
  const messages: ChatMessage[] = [];
  const system = systemText(request['system'], 'system');
  if (system !== '') messages.push({ role: 'system', content: system });
  request.messages.forEach((message, index) => appendMessage(messages, message, `messages.${index}`, dropped));
  if (!messages.some((message) => message.role !== 'system')) throw refuseField('messages', 'The request has no message for the model.');

  const body: ChatRequestBody = { model: request.model, messages };
  const maxTokens = request['max_tokens'];
  // max_tokens, not max_completion_tokens: every chat upstream knows it (as /v1/responses does).
  if (typeof maxTokens === 'number') body['max_tokens'] = maxTokens;
  for (const field of ['temperature', 'top_p'] as const) {
    if (typeof request[field] === 'number') body[field] = request[field];
  }
  const stop = request['stop_sequences'];
  if (Array.isArray(stop) && stop.length > 0) body['stop'] = stop.filter((sequence) => typeof sequence === 'string');
  const tools = convertMessagesTools(request['tools'], request['tool_choice']);
  Object.assign(body, tools.fields);
  dropped.push(...tools.dropped);
  const format = responseFormat(request['output_config']);
  if (format !== undefined) body['response_format'] = format;
  if (isObject(request['output_config']) && request['output_config']['effort'] !== undefined) dropped.push('output_config.effort');
  if (request['stream'] === true) {
    body['stream'] = true;
    body['stream_options'] = { include_usage: true };
  }
  return { body, dropped };
}

/** `system` as one string: text blocks joined by a blank line, as a chat system message holds them. */
function systemText(value: unknown, where: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (!Array.isArray(value)) throw refuseField(where, `${where} must be a string or a list of text blocks.`);
  return value
    .map((block, index) => {
      const text = asObject(block);
      if (text?.['type'] !== 'text' || typeof text['text'] !== 'string') throw refuseField(`${where}.${index}`, 'A system prompt holds text blocks only.');
      return text['text'];
    })
    .filter((text) => text !== '')
    .join('\n\n');
}

function appendMessage(messages: ChatMessage[], value: unknown, where: string, dropped: string[]): void {
  const message = asObject(value);
  if (message === undefined) throw refuseField(where, 'A message must be an object.');
  const content = message['content'];
  switch (message['role']) {
    case 'system': {
      // Claude Code sends some of its instructions as a system message among the others.
      const text = systemText(content, `${where}.content`);
      if (text !== '') messages.push({ role: 'system', content: text });
      return;
    }
    case 'user':
      appendUserMessage(messages, content, where);
      return;
    case 'assistant':
      appendAssistantMessage(messages, content, where, dropped);
      return;
    default:
      throw refuseField(`${where}.role`, 'A message role must be "user", "assistant" or "system".');
  }
}

/**
 * A user message: its tool results become tool messages first (chat wants them right after the
 * assistant's calls), then the rest of its blocks one user message. Images a tool returned follow
 * in that user message, since a chat tool message holds text only.
 */
function appendUserMessage(messages: ChatMessage[], content: unknown, where: string): void {
  if (typeof content === 'string') {
    messages.push({ role: 'user', content });
    return;
  }
  if (!Array.isArray(content)) throw refuseField(`${where}.content`, 'Message content must be a string or a list of content blocks.');
  const parts: ChatUserPart[] = [];
  content.forEach((value, index) => {
    const block = asObject(value) ?? {};
    const blockWhere = `${where}.content.${index}`;
    if (block['type'] === 'tool_result') {
      const result = toolResult(block, blockWhere);
      messages.push({ role: 'tool', tool_call_id: result.id, content: result.text });
      parts.push(...result.images);
      return;
    }
    parts.push(...userParts(block, blockWhere));
  });
  if (parts.length === 0) return;
  const only = parts[0];
  if (parts.length === 1 && only?.type === 'text') messages.push({ role: 'user', content: only.text });
  else messages.push({ role: 'user', content: parts });
}

function userParts(block: JsonObject, where: string): ChatUserPart[] {
  switch (block['type']) {
    case 'text':
      return typeof block['text'] === 'string' && block['text'] !== '' ? [{ type: 'text', text: block['text'] }] : [];
    case 'image':
      return [imagePart(block['source'], `${where}.source`)];
    case 'document':
      return documentParts(block, where);
    case 'thinking':
    case 'redacted_thinking':
      // Thinking belongs to assistant turns; a client that moved it is answered as if it were not there.
      return [];
    default:
      throw unsupportedBlock(block, where);
  }
}

function imagePart(value: unknown, where: string): ChatUserPart {
  const source = asObject(value) ?? {};
  if (source['type'] === 'base64' && typeof source['media_type'] === 'string' && typeof source['data'] === 'string') {
    return { type: 'image_url', image_url: { url: `data:${source['media_type']};base64,${source['data']}` } };
  }
  if (source['type'] === 'url' && typeof source['url'] === 'string') return { type: 'image_url', image_url: { url: source['url'] } };
  throw refuseField(where, "Images must be base64 data or a URL for this model; file ids are kept by Anthropic's Files API, which its upstream cannot read.");
}

/** A document: a PDF as a chat `file` part, plain text or content blocks as text. */
function documentParts(block: JsonObject, where: string): ChatUserPart[] {
  const source = asObject(block['source']) ?? {};
  const title = typeof block['title'] === 'string' && block['title'] !== '' ? block['title'] : undefined;
  if (source['type'] === 'base64' && source['media_type'] === 'application/pdf' && typeof source['data'] === 'string') {
    return [{ type: 'file', file: { filename: title ?? 'document.pdf', file_data: `data:application/pdf;base64,${source['data']}` } }];
  }
  if (source['type'] === 'text' && typeof source['data'] === 'string') {
    return [{ type: 'text', text: title === undefined ? source['data'] : `${title}\n\n${source['data']}` }];
  }
  if (source['type'] === 'content') {
    const inner = source['content'];
    if (typeof inner === 'string') return [{ type: 'text', text: inner }];
    if (Array.isArray(inner)) return inner.flatMap((part, index) => userParts(asObject(part) ?? {}, `${where}.source.content.${index}`));
  }
  throw refuseField(
    `${where}.source`,
    'Documents must be base64 PDFs, plain text or content blocks for this model; PDF URLs and file ids are fetched by Anthropic, which its upstream cannot do.',
  );
}

interface ToolResult {
  id: string;
  text: string;
  images: ChatUserPart[];
}

function toolResult(block: JsonObject, where: string): ToolResult {
  const id = typeof block['tool_use_id'] === 'string' ? block['tool_use_id'] : '';
  const content = block['content'];
  const texts: string[] = [];
  const images: ChatUserPart[] = [];
  if (typeof content === 'string') texts.push(content);
  else if (Array.isArray(content)) {
    content.forEach((value, index) => {
      const part = asObject(value) ?? {};
      const partWhere = `${where}.content.${index}`;
      if (part['type'] === 'image') images.push(imagePart(part['source'], `${partWhere}.source`));
      else for (const converted of userParts(part, partWhere)) converted.type === 'text' ? texts.push(converted.text) : images.push(converted);
    });
  }
  let text = texts.join('\n');
  if (images.length > 0)
    text += `${text === '' ? '' : '\n'}(${images.length === 1 ? 'an attachment follows' : `${images.length} attachments follow`} in the next message)`;
  // Chat has no error flag on a tool result: the model is told in words.
  if (block['is_error'] === true) text = `Error: ${text}`;
  return { id, text, images };
}

/** An assistant turn: its text as content, its tool_use blocks as tool calls; thinking is not sent back. */
function appendAssistantMessage(messages: ChatMessage[], content: unknown, where: string, dropped: string[]): void {
  if (typeof content === 'string') {
    messages.push({ role: 'assistant', content });
    return;
  }
  if (!Array.isArray(content)) throw refuseField(`${where}.content`, 'Message content must be a string or a list of content blocks.');
  let text = '';
  const toolCalls: ChatToolCall[] = [];
  content.forEach((value, index) => {
    const block = asObject(value) ?? {};
    const blockWhere = `${where}.content.${index}`;
    switch (block['type']) {
      case 'text':
        if (typeof block['text'] === 'string') text += block['text'];
        return;
      case 'tool_use':
        toolCalls.push({
          id: typeof block['id'] === 'string' ? block['id'] : '',
          type: 'function',
          function: { name: typeof block['name'] === 'string' ? block['name'] : '', arguments: JSON.stringify(block['input'] ?? {}) },
        });
        return;
      case 'thinking':
      case 'redacted_thinking':
        // A chat upstream takes no reasoning back; the model answers from the conversation's text.
        if (!dropped.includes('thinking blocks')) dropped.push('thinking blocks');
        return;
      default:
        throw unsupportedBlock(block, blockWhere);
    }
  });
  if (text === '' && toolCalls.length === 0) return;
  messages.push({ role: 'assistant', content: text === '' ? null : text, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) });
}

/** Server tools' blocks (web search results, code execution…) and Anthropic-only kinds: a chat upstream cannot read them. */
function unsupportedBlock(block: JsonObject, where: string): Error {
  return refuseField(
    `${where}.type`,
    `Content blocks of type ${JSON.stringify(block['type'])} cannot be sent to this model: it is served over a chat completions upstream.`,
  );
}

/** `output_config.format` (structured outputs) as chat's `response_format`. */
function responseFormat(value: unknown): Record<string, unknown> | undefined {
  const format = asObject(asObject(value)?.['format']);
  if (format === undefined) return undefined;
  if (format['type'] !== 'json_schema' || !isObject(format['schema'])) {
    throw refuseField('output_config.format', 'output_config.format must be {"type": "json_schema", "schema": {…}}.');
  }
  return { type: 'json_schema', json_schema: { name: 'output', schema: format['schema'], strict: true } };
}
