import { isObject, parseJson } from '../../core/index.js';
import { GatewayError } from '../../errors/index.js';
import type { GeminiContent, GeminiPart, GeminiRole } from './gemini-api.js';

/**
 * Gemini 3 rejects a replayed `functionCall` without the thought signature it came with. OpenAI
 * messages cannot carry one, so the sentinel Google documents for histories built elsewhere is
 * sent instead (https://ai.google.dev/gemini-api/docs/thought-signatures).
 */
export const SKIP_THOUGHT_SIGNATURE = 'skip_thought_signature_validator';

const INPUT_AUDIO_TYPES: Record<string, string> = { wav: 'audio/wav', mp3: 'audio/mp3' };
const DATA_URL = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s;

interface OpenAIContentPart {
  type?: string;
  text?: string;
  refusal?: string;
  image_url?: { url?: string } | string;
  input_audio?: { data?: string; format?: string };
  file?: { file_data?: string; filename?: string };
}

interface OpenAIToolCall {
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
}

interface OpenAIMessage {
  role?: string;
  content?: string | OpenAIContentPart[] | null;
  name?: string;
  tool_calls?: OpenAIToolCall[] | null;
  tool_call_id?: string;
}

export interface GeminiConversation {
  systemInstruction?: { parts: Array<{ text: string }> };
  contents: GeminiContent[];
}

/**
 * OpenAI chat messages as Gemini `contents`: system and developer messages become the
 * `systemInstruction`, assistant turns the `model` role, tool results `functionResponse` parts of a
 * user turn. Consecutive turns of one role are merged, since Gemini wants roles to alternate and
 * parallel tool results to arrive in one turn.
 */
export function convertToGeminiContents(messages: readonly unknown[]): GeminiConversation {
  const system: Array<{ text: string }> = [];
  const contents: GeminiContent[] = [];
  // Gemini's functionResponse is matched by name; OpenAI's tool message only has the call id.
  const toolNames = new Map<string, string>();

  const append = (role: GeminiRole, parts: GeminiPart[]) => {
    if (parts.length === 0) return;
    const last = contents[contents.length - 1];
    if (last?.role === role && last.parts !== undefined) last.parts.push(...parts);
    else contents.push({ role, parts });
  };

  messages.forEach((raw, index) => {
    const message = (typeof raw === 'object' && raw !== null ? raw : {}) as OpenAIMessage;
    const param = `messages[${index}]`;
    switch (message.role) {
      case 'system':
      case 'developer':
        for (const text of textsOf(message.content, `${param}.content`)) system.push({ text });
        return;
      case 'user':
        append('user', userParts(message.content, `${param}.content`));
        return;
      case 'assistant':
        append('model', assistantParts(message, param, toolNames));
        return;
      case 'tool': {
        const name = message.tool_call_id === undefined ? undefined : toolNames.get(message.tool_call_id);
        if (name === undefined) {
          throw new GatewayError('upstream_bad_request', `${param}.tool_call_id does not match a tool call of an earlier assistant message.`, {
            param: `${param}.tool_call_id`,
          });
        }
        append('user', [{ functionResponse: { name, response: toolResponse(textsOf(message.content, `${param}.content`).join('')) } }]);
        return;
      }
      case 'function':
        // The deprecated function-calling shape names the function itself.
        append('user', [{ functionResponse: { name: message.name ?? '', response: toolResponse(textsOf(message.content, `${param}.content`).join('')) } }]);
        return;
      default:
        throw new GatewayError('upstream_bad_request', `${param}.role ${JSON.stringify(message.role)} is not supported by Gemini.`, { param: `${param}.role` });
    }
  });

  return { ...(system.length > 0 ? { systemInstruction: { parts: system } } : {}), contents };
}

function userParts(content: OpenAIMessage['content'], param: string): GeminiPart[] {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  if (!Array.isArray(content)) return [];
  return content.map((part, index) => userPart(part, `${param}[${index}]`));
}

function userPart(part: OpenAIContentPart, param: string): GeminiPart {
  switch (part.type) {
    case 'text':
      return { text: part.text ?? '' };
    case 'image_url': {
      const url = typeof part.image_url === 'string' ? part.image_url : part.image_url?.url;
      return { inlineData: inlineDataOf(url, `${param}.image_url.url`) };
    }
    case 'input_audio': {
      const mimeType = INPUT_AUDIO_TYPES[part.input_audio?.format ?? ''] ?? `audio/${part.input_audio?.format ?? 'wav'}`;
      return { inlineData: { mimeType, data: part.input_audio?.data ?? '' } };
    }
    case 'file':
      return { inlineData: inlineDataOf(part.file?.file_data, `${param}.file.file_data`) };
    default:
      throw new GatewayError('upstream_bad_request', `${param}.type ${JSON.stringify(part.type)} is not supported by Gemini.`, { param: `${param}.type` });
  }
}

/** Gemini takes media inline as base64; it cannot fetch an arbitrary URL for the caller. */
function inlineDataOf(url: string | undefined, param: string): { mimeType: string; data: string } {
  const match = url === undefined ? null : DATA_URL.exec(url);
  if (match?.[1] === undefined || match[2] === undefined) {
    throw new GatewayError('upstream_bad_request', `${param} must be a base64 data: URL for Gemini upstreams.`, { param });
  }
  return { mimeType: match[1], data: match[2] };
}

function assistantParts(message: OpenAIMessage, param: string, toolNames: Map<string, string>): GeminiPart[] {
  const parts: GeminiPart[] = textsOf(message.content, `${param}.content`)
    .filter((text) => text !== '')
    .map((text) => ({ text }));
  (message.tool_calls ?? []).forEach((call, index) => {
    const name = call.function?.name ?? '';
    if (call.id !== undefined) toolNames.set(call.id, name);
    const functionCall = { name, args: parseArguments(call.function?.arguments, `${param}.tool_calls[${index}].function.arguments`) };
    // Only the first function call of a step carries a signature; parallel ones come unsigned.
    parts.push(index === 0 ? { functionCall, thoughtSignature: SKIP_THOUGHT_SIGNATURE } : { functionCall });
  });
  return parts;
}

function parseArguments(text: string | undefined, param: string): Record<string, unknown> {
  if (text === undefined || text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new GatewayError('upstream_bad_request', `${param} is not valid JSON, which Gemini requires.`, { param });
  }
  if (!isObject(parsed)) throw new GatewayError('upstream_bad_request', `${param} must be a JSON object for Gemini.`, { param });
  return parsed;
}

/** Gemini wants a JSON object as the function's response; other results are wrapped in one. */
function toolResponse(text: string): Record<string, unknown> {
  const parsed = parseJson(text);
  if (parsed === undefined) return { content: text };
  return isObject(parsed) ? parsed : { content: parsed };
}

/** The text of a message whose content may only be text (system, assistant, tool). */
function textsOf(content: OpenAIMessage['content'], param: string): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  return content.map((part, index) => {
    if (part.type === 'text') return part.text ?? '';
    if (part.type === 'refusal') return part.refusal ?? '';
    throw new GatewayError('upstream_bad_request', `${param}[${index}].type ${JSON.stringify(part.type)} is not supported here by Gemini.`, {
      param: `${param}[${index}].type`,
    });
  });
}
