import { GatewayError } from '../../errors/index.js';
import { isObject } from '../../core/index.js';
import type { ResponseOutputItem } from './response-object.js';
import type { StreamReaderFactory } from './responses-event-stream.js';
import type { ResponseFunctionCallItem, ResponseStreamEvent, StreamedOutputItem, StreamedResponse } from './responses-types.js';
import { convertResponsesUsage } from './responses-usage.js';

/**
 * Whether a Responses upstream's event carries the model's output (or ends the response): what
 * the gateway waits for before it answers, as it waits for a chat stream's first chunk. What
 * comes before (`response.created`, reasoning) says nothing the caller gets, and a failure there
 * can still go to another credential.
 */
export function carriesOutput(event: ResponseStreamEvent): boolean {
  switch (event.type) {
    case 'response.output_text.delta':
    case 'response.refusal.delta':
    case 'response.function_call_arguments.delta':
      return typeof event.delta === 'string' && event.delta !== '';
    case 'response.output_item.added':
    case 'response.output_item.done':
      return event.item?.type === 'message' || event.item?.type === 'function_call';
    case 'response.completed':
    case 'response.incomplete':
      return true;
    default:
      return false;
  }
}

interface CallState {
  index: number;
  /** The arguments already read, to read only the rest when the call's final item says more. */
  sent: string;
}

/**
 * Reads a Responses upstream's parsed events (the ChatGPT Codex backend's) into the items of the
 * gateway's own Response, so that a caller sees the same response, ids, events and stored items
 * as from any other upstream: text and refusal deltas, function calls (with their `namespace`, as
 * the upstream names them), and the usage and end of `response.completed` / `.incomplete`.
 * Reasoning items and the events that repeat what the deltas said are not carried, as on the
 * converted path. A failure event is thrown, for a provider that did not classify it first.
 */
export const readResponseEvents: StreamReaderFactory = (items, state) => {
  const calls = new Map<string, CallState>();
  let callCount = 0;
  const streamedMessages = new Set<string>();

  const find = (itemId: unknown, outputIndex: unknown): CallState | undefined =>
    (typeof itemId === 'string' ? calls.get(`item:${itemId}`) : undefined) ??
    (typeof outputIndex === 'number' ? calls.get(`output:${outputIndex}`) : undefined);

  const start = (item: ResponseFunctionCallItem, outputIndex: unknown): CallState => {
    const known = find(item.id, outputIndex);
    if (known !== undefined) return known;
    const call: CallState = { index: callCount++, sent: '' };
    if (typeof item.id === 'string') calls.set(`item:${item.id}`, call);
    if (typeof outputIndex === 'number') calls.set(`output:${outputIndex}`, call);
    const name = typeof item.name === 'string' ? item.name : '';
    const qualified = typeof item.namespace === 'string' ? { namespace: item.namespace, name } : { name };
    items.toolCall(call.index, { ...(typeof item.call_id === 'string' && item.call_id !== '' ? { id: item.call_id } : {}), qualified });
    return call;
  };

  const addArguments = (call: CallState, delta: string): void => {
    call.sent += delta;
    items.toolCall(call.index, { arguments: delta });
  };

  /** A finished item: what its deltas did not say (a call or a message sent whole) is read now. */
  const finishItem = (item: StreamedOutputItem | undefined, outputIndex: unknown): void => {
    if (isFunctionCall(item)) {
      const call = start(item, outputIndex);
      const complete = item.arguments;
      if (typeof complete === 'string' && complete.length > call.sent.length && complete.startsWith(call.sent))
        addArguments(call, complete.slice(call.sent.length));
      return;
    }
    if (item?.type !== 'message' || !('content' in item) || !Array.isArray(item.content)) return;
    if (typeof item.id === 'string' && streamedMessages.has(item.id)) return;
    for (const part of item.content) {
      if (part.type === 'output_text' && typeof part.text === 'string' && part.text !== '') items.text(part.text, 'output_text');
      else if (part.type === 'refusal' && typeof part.refusal === 'string' && part.refusal !== '') items.text(part.refusal, 'refusal');
    }
  };

  const finish = (type: 'response.completed' | 'response.incomplete', response: StreamedResponse | undefined): void => {
    // The upstream's `service_tier` is not echoed: the ChatGPT backend's tiers are its plan's, not the caller's choice.
    state.usage = convertResponsesUsage(response?.usage) ?? state.usage;
    if (type === 'response.incomplete' || response?.status === 'incomplete') {
      state.incompleteReason = response?.incomplete_details?.reason === 'content_filter' ? 'content_filter' : 'max_output_tokens';
    }
  };

  return (value) => {
    if (!isObject(value) || typeof value['type'] !== 'string') return;
    const event = value as unknown as ResponseStreamEvent;
    switch (event.type) {
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        if (typeof event.item_id === 'string') streamedMessages.add(event.item_id);
        if (typeof event.delta === 'string' && event.delta !== '') items.text(event.delta, event.type === 'response.refusal.delta' ? 'refusal' : 'output_text');
        break;
      case 'response.output_item.added':
        if (isFunctionCall(event.item)) start(event.item, event.output_index);
        break;
      case 'response.function_call_arguments.delta': {
        // A delta of a call whose start never came is caught up from the call's final item.
        const call = find(event.item_id, event.output_index);
        if (call !== undefined && typeof event.delta === 'string' && event.delta !== '') addArguments(call, event.delta);
        break;
      }
      case 'response.output_item.done':
        finishItem(event.item, event.output_index);
        break;
      case 'response.completed':
      case 'response.incomplete':
        finish(event.type, event.response);
        break;
      case 'response.failed':
      case 'error': {
        const error = event.type === 'error' ? (event.error ?? event) : event.response?.error;
        throw new GatewayError(
          'upstream_error',
          typeof error?.message === 'string' && error.message !== '' ? error.message : 'The upstream failed while streaming.',
        );
      }
      default:
        break;
    }
  };
};

function isFunctionCall(item: StreamedOutputItem | undefined): item is ResponseFunctionCallItem {
  return item?.type === 'function_call';
}

/** The events from the first that carries output on (carriesOutput): the ones before it say nothing the caller gets. */
export async function* fromFirstOutput(events: AsyncIterable<ResponseStreamEvent>): AsyncGenerator<ResponseStreamEvent> {
  let started = false;
  for await (const event of events) {
    if (!started && !carriesOutput(event)) continue;
    started = true;
    yield event;
  }
}

/** The text a Response's output holds (messages, refusals, call arguments): what usage is estimated from when the upstream gave none. */
export function generatedText(output: readonly ResponseOutputItem[]): string {
  let text = '';
  for (const item of output) {
    if (item.type === 'function_call') text += item.arguments;
    else for (const part of item.content) text += part.type === 'refusal' ? part.refusal : part.text;
  }
  return text;
}
