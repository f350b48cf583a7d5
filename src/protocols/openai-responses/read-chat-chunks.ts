import { GatewayError } from '../../errors/index.js';
import { incompleteReasonOf } from './convert-chat-to-response.js';
import { isObject } from '../../core/index.js';
import { convertChatUsage } from './convert-chat-usage.js';
import type { StreamReaderFactory } from './responses-event-stream.js';

/** Reads parsed `chat.completion.chunk` objects into a Responses stream's items: the converted path. */
export const readChatChunks: StreamReaderFactory = (items, state) => (chunk) => {
  if (!isObject(chunk)) return;
  if (isObject(chunk['error']) && chunk['choices'] === undefined) {
    const message = chunk['error']['message'];
    throw new GatewayError('upstream_error', typeof message === 'string' ? message : 'The upstream failed while streaming.');
  }
  state.usage = convertChatUsage(chunk['usage']) ?? state.usage;
  if (chunk['service_tier'] !== undefined) state.serviceTier = chunk['service_tier'];
  const choices = Array.isArray(chunk['choices']) ? (chunk['choices'] as unknown[]) : [];
  for (const choice of choices) {
    // The gateway never asks for n > 1; any other choice is not this response's.
    if (!isObject(choice) || (choice['index'] ?? 0) !== 0) continue;
    const delta = isObject(choice['delta']) ? choice['delta'] : {};
    // `reasoning_content` (DeepSeek, vLLM…) is not turned into reasoning items: a client hands
    // those back on its next turn, and no chat upstream can take them back.
    if (typeof delta['content'] === 'string' && delta['content'] !== '') items.text(delta['content'], 'output_text');
    if (typeof delta['refusal'] === 'string' && delta['refusal'] !== '') items.text(delta['refusal'], 'refusal');
    const calls = Array.isArray(delta['tool_calls']) ? (delta['tool_calls'] as unknown[]) : [];
    calls.forEach((call, position) => {
      if (!isObject(call)) return;
      const fn = isObject(call['function']) ? call['function'] : {};
      const index = typeof call['index'] === 'number' ? call['index'] : position;
      items.toolCall(index, { id: stringOrUndefined(call['id']), name: stringOrUndefined(fn['name']), arguments: stringOrUndefined(fn['arguments']) });
    });
    // A stream cut short throws in the chunk source, so one that ends without a finish_reason ended normally.
    if (typeof choice['finish_reason'] === 'string') state.incompleteReason = incompleteReasonOf(choice['finish_reason']);
  }
};

function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
