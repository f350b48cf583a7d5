import { isObject } from '../../core/index.js';
import { convertChatUsage } from './convert-chat-usage.js';
import {
  createResponseObject,
  idMaker,
  type IncompleteReason,
  type ResponseContext,
  type ResponseObject,
  type ResponseOutputContent,
  type ResponseOutputItem,
  toolNameFields,
} from './response-object.js';
import type { ResponseInputItem, ResponsesRequest } from './responses-types.js';

/**
 * A parsed `chat.completion` as a Response. Chat says nothing of the order of text and tool
 * calls, so the message (if any text) comes first, as a model writes it, then one function_call
 * per tool call. `finish_reason` length or content_filter make the response incomplete. The
 * usage for the request record is `convertChatUsage(completion.usage)?.usage` (null: estimate it).
 */
export function chatCompletionToResponse(completion: unknown, context: ResponseContext): ResponseObject {
  const newId = idMaker(context);
  const choice = firstChoice(completion);
  const message = isObject(choice?.['message']) ? choice['message'] : {};
  const output: ResponseOutputItem[] = [];
  const content: ResponseOutputContent[] = [];
  const text = messageText(message['content']);
  if (text !== '') content.push({ type: 'output_text', text, annotations: [], logprobs: [] });
  if (typeof message['refusal'] === 'string' && message['refusal'] !== '') content.push({ type: 'refusal', refusal: message['refusal'] });
  if (content.length > 0) output.push({ type: 'message', id: newId('msg'), status: 'completed', role: 'assistant', content });
  for (const call of Array.isArray(message['tool_calls']) ? (message['tool_calls'] as unknown[]) : []) {
    if (!isObject(call) || !isObject(call['function'])) continue;
    const fn = call['function'];
    output.push({
      type: 'function_call',
      id: newId('fc'),
      call_id: typeof call['id'] === 'string' && call['id'] !== '' ? call['id'] : newId('call'),
      ...toolNameFields(context, typeof fn['name'] === 'string' ? fn['name'] : ''),
      arguments: typeof fn['arguments'] === 'string' ? fn['arguments'] : '',
      status: 'completed',
    });
  }
  const incompleteReason = incompleteReasonOf(choice?.['finish_reason']);
  const last = output.at(-1);
  // The item the model was writing when it was stopped is the one left unfinished.
  if (incompleteReason !== null && last !== undefined) last.status = 'incomplete';
  const usage = convertChatUsage(isObject(completion) ? completion['usage'] : undefined);
  return createResponseObject(context, {
    status: incompleteReason === null ? 'completed' : 'incomplete',
    output,
    incompleteReason,
    usage: usage?.response ?? null,
    serviceTier: isObject(completion) ? completion['service_tier'] : undefined,
  });
}

export function incompleteReasonOf(finishReason: unknown): IncompleteReason | null {
  if (finishReason === 'length') return 'max_output_tokens';
  if (finishReason === 'content_filter') return 'content_filter';
  return null;
}

function firstChoice(completion: unknown): Record<string, unknown> | undefined {
  if (!isObject(completion) || !Array.isArray(completion['choices'])) return undefined;
  const choices = completion['choices'] as unknown[];
  const choice = choices.find((candidate) => isObject(candidate) && (candidate['index'] ?? 0) === 0);
  return isObject(choice) ? choice : undefined;
}

/** Chat content is a string, or for a few upstreams a list of text parts. */
function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part: unknown) => (isObject(part) && typeof part['text'] === 'string' ? part['text'] : '')).join('');
}

/**
 * A Response's output as input items, the form a later request's `previous_response_id` brings
 * back into the conversation. Item ids are kept, so that `item_reference`s can find them.
 */
export function responseOutputItems(response: Pick<ResponseObject, 'output'>): ResponseInputItem[] {
  return response.output.map((item): ResponseInputItem => {
    if (item.type === 'function_call') {
      const namespace = item.namespace === undefined ? {} : { namespace: item.namespace };
      return { type: 'function_call', id: item.id, call_id: item.call_id, ...namespace, name: item.name, arguments: item.arguments, status: item.status };
    }
    return { type: 'message', id: item.id, role: 'assistant', status: item.status, content: item.content.map((part) => ({ ...part })) };
  });
}

/**
 * The items one turn adds to a conversation: the request's input (with its item references
 * already resolved), then the response's output. A `previous_response_id` chain is the history
 * before the turn followed by these. Instructions are left out: the API does not carry them over.
 */
export function turnItems(request: Pick<ResponsesRequest, 'input'>, response: Pick<ResponseObject, 'output'>): ResponseInputItem[] {
  const input = request.input;
  const inputItems: ResponseInputItem[] =
    typeof input === 'string' ? [{ type: 'message', role: 'user', content: input }] : Array.isArray(input) ? [...input] : [];
  return [...inputItems, ...responseOutputItems(response)];
}
