import { ChatToolNames } from './chat-tool-names.js';
import type { ChatMessage } from '../openai-chat/chat-types.js';
import { appendInputItems } from './convert-input-items.js';
import { convertTextConfig, convertTools, type DroppedTool } from './convert-responses-tools.js';
import { refuseField } from './refuse-field.js';
import type { ResponseInputItem, ResponsesRequest } from './responses-types.js';

export interface ChatConversion {
  /** A chat completions request body; `model` is still the client's, for the service to replace. */
  body: Record<string, unknown> & { model: string; messages: ChatMessage[] };
  /** The request's tools the upstream is not offered (hosted ones, custom…): none of them was forced. */
  dropped: DroppedTool[];
}

/** Request fields with the same name and meaning in chat completions. */
const SAME_IN_CHAT = ['temperature', 'top_p', 'user', 'safety_identifier', 'prompt_cache_key', 'prompt_cache_retention', 'service_tier'] as const;

/** `include` values the conversion can honour: they ask for nothing, or for what it never produces. */
const HARMLESS_INCLUDES = new Set([
  'reasoning.encrypted_content',
  'message.input_image.image_url',
  'file_search_call.results',
  'web_search_call.results',
  'web_search_call.action.sources',
  'computer_call_output.output.image_url',
  'code_interpreter_call.outputs',
]);

/**
 * A Responses request as a chat completions request, for an upstream that speaks only chat.
 * `history` is the earlier conversation the service resolved (a `previous_response_id` chain);
 * item references in the input must be resolved too. Instructions are not part of the history:
 * the API applies only the current request's.
 * `names` gives namespaced functions their chat names (the answer's calls are named back with it).
 * Throws a 400 naming the field for what a chat upstream cannot do.
 */
export function responsesToChat(
  request: ResponsesRequest,
  history: readonly ResponseInputItem[],
  names: ChatToolNames = ChatToolNames.of(request.tools),
): ChatConversion {
  refuseUnsupportedFields(request);
  const messages: ChatMessage[] = [];
  if (typeof request.instructions === 'string' && request.instructions !== '') {
    messages.push({ role: 'system', content: request.instructions });
  }
  appendInputItems(messages, history, () => 'previous_response_id', names);
  const input = request.input;
  if (typeof input === 'string') {
    messages.push({ role: 'user', content: input });
  } else if (Array.isArray(input)) {
    appendInputItems(messages, input, (index) => `input[${index}]`, names);
  } else if (input !== undefined && input !== null) {
    throw refuseField('input', 'input must be a string or a list of items.');
  }
  if (messages.length === 0) throw refuseField('input', 'The request has no input for the model.');

  const body: ChatConversion['body'] = { model: request.model, messages };
  for (const field of SAME_IN_CHAT) {
    const value = request[field];
    if (value !== undefined && value !== null) body[field] = value;
  }
  // Chat has both caps. max_tokens is the one every chat upstream knows (llama.cpp, vLLM, Ollama
  // and the gateway's own converters read either); OpenAI's reasoning models, which refuse it,
  // are served the Responses API natively rather than through this conversion.
  if (typeof request.max_output_tokens === 'number') body['max_tokens'] = request.max_output_tokens;
  if (typeof request.reasoning?.effort === 'string') body['reasoning_effort'] = request.reasoning.effort;
  const tools = convertTools(request, names);
  Object.assign(body, tools.fields, convertTextConfig(request.text));
  if (request.stream === true) {
    body['stream'] = true;
    body['stream_options'] = { include_usage: true };
  }
  return { body, dropped: tools.dropped };
}

/**
 * What only OpenAI's side can do. `store`, `metadata` and `previous_response_id` are the
 * gateway's own business and never reach the upstream; `reasoning.summary` is accepted and yields
 * no summary, which the API also allows.
 */
function refuseUnsupportedFields(request: ResponsesRequest): void {
  if (request.background === true) {
    throw refuseField('background', 'Background responses are not supported by this gateway; send the request without background, streaming if it is long.');
  }
  if (request.conversation !== undefined && request.conversation !== null) {
    throw refuseField('conversation', 'Conversations are not supported by this gateway; use previous_response_id.');
  }
  if (request.prompt !== undefined && request.prompt !== null) {
    throw refuseField('prompt', 'Stored prompt templates live on OpenAI and cannot be used with this model.');
  }
  if (request.context_management !== undefined && request.context_management !== null) {
    throw refuseField('context_management', 'Context management (compaction) cannot be done by a chat completions upstream.');
  }
  if (request.moderation !== undefined && request.moderation !== null) {
    throw refuseField('moderation', 'Moderation of responses is not available with this model.');
  }
  if (request.truncation === 'auto') {
    throw refuseField(
      'truncation',
      "truncation 'auto' cannot be honoured: the upstream refuses an input longer than its context instead of dropping the oldest items.",
    );
  }
  (request.include ?? []).forEach((value, index) => {
    if (!HARMLESS_INCLUDES.has(value)) {
      throw refuseField(`include[${index}]`, `include '${value}' is not supported with this model.`);
    }
  });
}
