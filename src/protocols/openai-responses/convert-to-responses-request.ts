import { asObject, type JsonObject } from '../../core/index.js';
import { echo, GatewayError } from '../../errors/index.js';
import type { ChatRequestBody } from '../openai-chat/chat-types.js';
import type {
  ResponseFunctionCallItem,
  ResponseFunctionTool,
  ResponseImageDetail,
  ResponseInputImagePart,
  ResponseInputItem,
  ResponseInputTextPart,
  ResponseOutputTextPart,
  ResponseTextConfig,
  ResponseTextFormat,
  ResponseToolChoice,
  StatelessResponsesRequest,
} from './responses-types.js';

export interface ResponsesRequestOptions {
  /** The model name the backend knows (the route's upstream model). */
  upstreamModel: string;
  /** Keeps a conversation on the backend's warm prompt cache; the caller's own key otherwise. */
  promptCacheKey?: string;
}

/**
 * An OpenAI chat completions body as a request to the ChatGPT Codex backend's Responses API.
 *
 * Dropped, because the backend answers 400 `{"detail":"Unsupported parameter: …"}` to each of them
 * (reported against chatgpt.com/backend-api/codex by relays that forward them: temperature, top_p,
 * max_output_tokens, presence/frequency penalties, seed, metadata, service_tier), and because
 * most chat clients send some of them by default: `temperature`, `top_p`, the penalties, `seed`
 * (sampling knobs, which the reasoning models it serves do not take), `max_tokens` and
 * `max_completion_tokens` (there is no `max_output_tokens` to carry them; the answer is as long as
 * the model makes it), `user`, `metadata`, `service_tier`, `store` (the backend requires
 * `store: false`), `stream` and `stream_options` (the backend always streams; the adapter decides
 * what the client gets).
 *
 * Refused with `upstream_bad_request` naming the field, because dropping them would answer
 * something else than what was asked: `n` > 1, `logprobs`, `top_logprobs`, audio output, `stop`,
 * `logit_bias`, `prediction`, `web_search_options`, the legacy `functions` and `function_call`,
 * audio and file parts, and tools other than functions.
 *
 * `include: ['reasoning.encrypted_content']` is not asked for: Codex asks for it to send its
 * reasoning items back on the next turn (the backend keeps nothing, `store: false`), and a chat
 * history carries no reasoning items to send back.
 */
export function toResponsesRequest(body: ChatRequestBody, options: ResponsesRequestOptions): StatelessResponsesRequest {
  refuseWhatCannotBeExpressed(body);
  const request: StatelessResponsesRequest = {
    model: options.upstreamModel,
    // The backend refuses a request without `instructions`; system and developer messages go in
    // `input`, in their place among the turns, so the field stays empty.
    instructions: '',
    input: toInputItems(body.messages),
    stream: true,
    store: false,
  };
  const tools = toTools(body['tools']);
  if (tools !== undefined) request.tools = tools;
  const toolChoice = toToolChoice(body['tool_choice']);
  if (toolChoice !== undefined) request.tool_choice = toolChoice;
  if (typeof body['parallel_tool_calls'] === 'boolean') request.parallel_tool_calls = body['parallel_tool_calls'];
  if (typeof body['reasoning_effort'] === 'string') request.reasoning = { effort: body['reasoning_effort'] };
  const text = toTextControls(body['response_format'], body['verbosity']);
  if (text !== undefined) request.text = text;
  const promptCacheKey = options.promptCacheKey ?? body['prompt_cache_key'];
  if (typeof promptCacheKey === 'string' && promptCacheKey !== '') request.prompt_cache_key = promptCacheKey;
  return request;
}

function refuseWhatCannotBeExpressed(body: ChatRequestBody): void {
  const n = body['n'];
  if (typeof n === 'number' && n > 1) refuse('n', 'n greater than 1 cannot be served by a ChatGPT (Codex) upstream: it answers one choice.');
  if (body['logprobs'] === true) refuse('logprobs', 'logprobs cannot be served by a ChatGPT (Codex) upstream.');
  const topLogprobs = body['top_logprobs'];
  if (typeof topLogprobs === 'number' && topLogprobs > 0) refuse('top_logprobs', 'top_logprobs cannot be served by a ChatGPT (Codex) upstream.');
  if (isPresent(body['audio'])) refuse('audio', 'Audio output cannot be served by a ChatGPT (Codex) upstream.');
  const modalities = body['modalities'];
  if (Array.isArray(modalities) && modalities.some((modality) => modality !== 'text')) {
    refuse('modalities', 'A ChatGPT (Codex) upstream answers text only.');
  }
  const stop = body['stop'];
  if ((typeof stop === 'string' && stop !== '') || (Array.isArray(stop) && stop.length > 0)) {
    refuse('stop', 'stop sequences cannot be served by a ChatGPT (Codex) upstream: its Responses API has none.');
  }
  const logitBias = asObject(body['logit_bias']);
  if (logitBias !== undefined && Object.keys(logitBias).length > 0) refuse('logit_bias', 'logit_bias cannot be served by a ChatGPT (Codex) upstream.');
  if (isPresent(body['prediction'])) refuse('prediction', 'Predicted outputs cannot be served by a ChatGPT (Codex) upstream.');
  if (isPresent(body['web_search_options'])) refuse('web_search_options', 'web_search_options cannot be served by a ChatGPT (Codex) upstream.');
  const functions = body['functions'];
  if (Array.isArray(functions) && functions.length > 0)
    refuse('functions', 'The legacy functions field is not supported by a ChatGPT (Codex) upstream; use tools.');
  if (isPresent(body['function_call']))
    refuse('function_call', 'The legacy function_call field is not supported by a ChatGPT (Codex) upstream; use tool_choice.');
}

function toInputItems(messages: readonly unknown[]): ResponseInputItem[] {
  const items: ResponseInputItem[] = [];
  messages.forEach((value, index) => {
    const where = `messages[${index}]`;
    const message = asObject(value) ?? refuse(where, `${where} must be an object.`);
    const role = message['role'];
    switch (role) {
      case 'system':
      case 'developer':
        // The Responses API's `developer` role is what chat's `system` became; its models treat them alike.
        items.push({ type: 'message', role: 'developer', content: instructionParts(message['content'], `${where}.content`) });
        break;
      case 'user':
        items.push({ type: 'message', role: 'user', content: userParts(message['content'], `${where}.content`) });
        break;
      case 'assistant':
        items.push(...assistantItems(message, where));
        break;
      case 'tool':
        items.push({
          type: 'function_call_output',
          call_id: stringAt(message, 'tool_call_id', where),
          output: toolOutput(message['content'], `${where}.content`),
        });
        break;
      default:
        refuse(`${where}.role`, `Messages with role ${echo(String(role))} cannot be sent to a ChatGPT (Codex) upstream; use tool messages.`);
    }
  });
  return items;
}

function instructionParts(content: unknown, where: string): ResponseInputTextPart[] {
  return contentParts(content, where).map((part, index) => {
    if (part['type'] !== 'text') refuse(`${where}[${index}].type`, `${where} may only hold text parts.`);
    return { type: 'input_text', text: stringAt(part, 'text', `${where}[${index}]`) };
  });
}

function userParts(content: unknown, where: string): Array<ResponseInputTextPart | ResponseInputImagePart> {
  return contentParts(content, where).map((part, index): ResponseInputTextPart | ResponseInputImagePart => {
    const partWhere = `${where}[${index}]`;
    switch (part['type']) {
      case 'text':
        return { type: 'input_text', text: stringAt(part, 'text', partWhere) };
      case 'image_url':
        return inputImage(part['image_url'], `${partWhere}.image_url`);
      default:
        return refuse(`${partWhere}.type`, `Content parts of type ${echo(String(part['type']))} cannot be sent to a ChatGPT (Codex) upstream.`);
    }
  });
}

function inputImage(value: unknown, where: string): ResponseInputImagePart {
  // OpenAI's SDKs send `{url, detail}`; a bare string is what some clients send, and means the same.
  const image = typeof value === 'string' ? { url: value } : asObject(value);
  const url = image?.['url'];
  if (typeof url !== 'string' || url === '') refuse(`${where}.url`, 'An image_url part needs a url.');
  const detail = image?.['detail'];
  return { type: 'input_image', image_url: url, detail: isImageDetail(detail) ? detail : 'auto' };
}

/**
 * An assistant turn: its words as an output message, then one function_call item per tool call.
 * An assistant turn with no words sends no message item: an empty one before function_call items
 * breaks the backend's matching of their outputs (CLIProxyAPI issue #2132).
 */
function assistantItems(message: JsonObject, where: string): ResponseInputItem[] {
  if (isPresent(message['audio'])) refuse(`${where}.audio`, 'Assistant audio cannot be sent to a ChatGPT (Codex) upstream.');
  if (isPresent(message['function_call']))
    refuse(`${where}.function_call`, 'The legacy function_call is not supported by a ChatGPT (Codex) upstream; use tool_calls.');
  const items: ResponseInputItem[] = [];
  const content = assistantText(message, where);
  if (content.length > 0) items.push({ type: 'message', role: 'assistant', content });
  const toolCalls = message['tool_calls'];
  if (Array.isArray(toolCalls)) toolCalls.forEach((call, index) => items.push(functionCall(call, `${where}.tool_calls[${index}]`)));
  return items;
}

function assistantText(message: JsonObject, where: string): ResponseOutputTextPart[] {
  const content = message['content'];
  const parts: ResponseOutputTextPart[] = [];
  if (typeof content === 'string') {
    if (content !== '') parts.push({ type: 'output_text', text: content });
  } else if (Array.isArray(content)) {
    content.forEach((value, index) => {
      const partWhere = `${where}.content[${index}]`;
      const part = asObject(value) ?? refuse(partWhere, `${partWhere} must be an object.`);
      // A refusal is what the model said; sent back as its words, the one part every backend takes.
      if (part['type'] === 'text') parts.push({ type: 'output_text', text: stringAt(part, 'text', partWhere) });
      else if (part['type'] === 'refusal') parts.push({ type: 'output_text', text: stringAt(part, 'refusal', partWhere) });
      else refuse(`${partWhere}.type`, `Assistant content parts of type ${echo(String(part['type']))} cannot be sent to a ChatGPT (Codex) upstream.`);
    });
  }
  const refusal = message['refusal'];
  if (parts.length === 0 && typeof refusal === 'string' && refusal !== '') parts.push({ type: 'output_text', text: refusal });
  return parts;
}

function functionCall(value: unknown, where: string): ResponseFunctionCallItem {
  const call = asObject(value) ?? refuse(where, `${where} must be an object.`);
  if (call['type'] !== undefined && call['type'] !== 'function') {
    refuse(`${where}.type`, `Tool calls of type ${echo(String(call['type']))} cannot be sent to a ChatGPT (Codex) upstream.`);
  }
  const definition = asObject(call['function']) ?? refuse(`${where}.function`, `${where} needs a function.`);
  const args = definition['arguments'];
  return {
    type: 'function_call',
    call_id: stringAt(call, 'id', where),
    name: stringAt(definition, 'name', `${where}.function`),
    arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}),
  };
}

/** A tool result is text to the Responses API: text parts are joined, as OpenAI reads them. */
function toolOutput(content: unknown, where: string): string {
  if (typeof content === 'string') return content;
  return contentParts(content, where)
    .map((part, index) => {
      if (part['type'] !== 'text') refuse(`${where}[${index}].type`, `${where} may only hold text parts.`);
      return stringAt(part, 'text', `${where}[${index}]`);
    })
    .join('');
}

function toTools(value: unknown): ResponseFunctionTool[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  return value.map((item, index) => {
    const where = `tools[${index}]`;
    const tool = asObject(item);
    const definition = asObject(tool?.['function']);
    if (tool?.['type'] !== 'function' || definition === undefined) refuse(where, 'Only function tools can be sent to a ChatGPT (Codex) upstream.');
    const converted: ResponseFunctionTool = {
      type: 'function',
      name: stringAt(definition, 'name', `${where}.function`),
      // A function without parameters takes none; the schema says so explicitly.
      parameters: asObject(definition['parameters']) ?? { type: 'object', properties: {} },
      // Chat completions' functions are not strict unless asked; the Responses API's are strict by default.
      strict: definition['strict'] === true,
    };
    if (typeof definition['description'] === 'string') converted.description = definition['description'];
    return converted;
  });
}

function toToolChoice(value: unknown): ResponseToolChoice | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === 'auto' || value === 'none' || value === 'required') return value;
  const choice = asObject(value);
  const name = asObject(choice?.['function'])?.['name'];
  if (choice?.['type'] === 'function' && typeof name === 'string') return { type: 'function', name };
  return refuse('tool_choice', 'tool_choice must be "auto", "none", "required" or a named function for a ChatGPT (Codex) upstream.');
}

function toTextControls(responseFormat: unknown, verbosity: unknown): ResponseTextConfig | undefined {
  const controls: ResponseTextConfig = {};
  const format = toTextFormat(responseFormat);
  if (format !== undefined) controls.format = format;
  if (typeof verbosity === 'string') controls.verbosity = verbosity;
  return Object.keys(controls).length === 0 ? undefined : controls;
}

function toTextFormat(value: unknown): ResponseTextFormat | undefined {
  if (value === undefined || value === null) return undefined;
  const format = asObject(value);
  switch (format?.['type']) {
    case 'text':
      return { type: 'text' };
    case 'json_object':
      return { type: 'json_object' };
    case 'json_schema': {
      const definition = asObject(format['json_schema']) ?? refuse('response_format.json_schema', 'A json_schema response_format needs its json_schema.');
      const name = definition['name'];
      const converted: ResponseTextFormat = {
        type: 'json_schema',
        name: typeof name === 'string' && name !== '' ? name : 'response',
        schema: asObject(definition['schema']) ?? {},
        strict: definition['strict'] === true,
      };
      if (typeof definition['description'] === 'string') converted.description = definition['description'];
      return converted;
    }
    default:
      return refuse('response_format', 'response_format must be text, json_object or json_schema for a ChatGPT (Codex) upstream.');
  }
}

/** A message's content as parts: a string is one text part. */
function contentParts(content: unknown, where: string): JsonObject[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (content === undefined || content === null) return [];
  if (!Array.isArray(content)) refuse(where, `${where} must be a string or an array of parts.`);
  return content.map((part, index) => asObject(part) ?? refuse(`${where}[${index}]`, `${where}[${index}] must be an object.`));
}

function stringAt(object: JsonObject, key: string, where: string): string {
  const value = object[key];
  if (typeof value !== 'string') refuse(`${where}.${key}`, `${where}.${key} must be a string.`);
  return value;
}

function isImageDetail(value: unknown): value is ResponseImageDetail {
  return value === 'low' || value === 'high' || value === 'auto';
}

function isPresent(value: unknown): boolean {
  return value !== undefined && value !== null && value !== false;
}

/** The caller asked for something this upstream cannot do: a 400 naming the field, not retried elsewhere. */
function refuse(param: string, message: string): never {
  throw new GatewayError('upstream_bad_request', message, { param });
}
