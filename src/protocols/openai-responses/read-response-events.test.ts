import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/index.js';
import { carriesOutput, fromFirstOutput, readResponseEvents } from './read-response-events.js';
import { ResponsesEventStream } from './responses-event-stream.js';
import type { ResponseStreamEvent } from './responses-types.js';

type Event = ResponseStreamEvent | (Record<string, unknown> & { type: string });

function context(): ConstructorParameters<typeof ResponsesEventStream>[0] {
  let counter = 0;
  return { id: 'resp_1', createdAt: 1_788_000_000, model: 'public-model', request: {}, newId: (prefix) => `${prefix}_${++counter}`, now: () => 1_788_000_001 };
}

async function* from(events: readonly Event[]): AsyncGenerator<unknown> {
  for (const event of events) yield event;
}

async function read(events: readonly Event[]): Promise<{ types: string[]; stream: ResponsesEventStream }> {
  const stream = new ResponsesEventStream(context(), undefined, readResponseEvents);
  const types: string[] = [];
  for await (const event of stream.events(from(events))) types.push(event.event);
  return { types, stream };
}

const USAGE = {
  input_tokens: 40,
  input_tokens_details: { cached_tokens: 32 },
  output_tokens: 9,
  output_tokens_details: { reasoning_tokens: 4 },
  total_tokens: 49,
};

describe('readResponseEvents: a Responses upstream read into the gateway own Response', () => {
  it('text deltas, a namespaced call with its arguments, and the usage of response.completed', async () => {
    const { types, stream } = await read([
      { type: 'response.output_item.added', output_index: 0, item: { type: 'reasoning', id: 'rs_1', summary: [] } },
      { type: 'response.output_text.delta', item_id: 'msg_up', output_index: 1, content_index: 0, delta: 'Let me ' },
      { type: 'response.output_text.delta', item_id: 'msg_up', output_index: 1, content_index: 0, delta: 'ask.' },
      {
        type: 'response.output_item.done',
        output_index: 1,
        item: { type: 'message', id: 'msg_up', role: 'assistant', content: [{ type: 'output_text', text: 'Let me ask.' }] },
      },
      {
        type: 'response.output_item.added',
        output_index: 2,
        item: { type: 'function_call', id: 'fc_up', call_id: 'call_9', namespace: 'multi_agent_v1', name: 'spawn_agent', arguments: '' },
      },
      { type: 'response.function_call_arguments.delta', item_id: 'fc_up', output_index: 2, delta: '{"task":' },
      {
        type: 'response.output_item.done',
        output_index: 2,
        item: { type: 'function_call', id: 'fc_up', call_id: 'call_9', namespace: 'multi_agent_v1', name: 'spawn_agent', arguments: '{"task":"x"}' },
      },
      { type: 'response.completed', response: { status: 'completed', usage: USAGE } },
    ]);
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    const { response, usage } = stream.result();
    expect(response.output).toEqual([
      {
        type: 'message',
        id: 'msg_1',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'Let me ask.', annotations: [], logprobs: [] }],
      },
      {
        type: 'function_call',
        id: 'fc_2',
        call_id: 'call_9',
        namespace: 'multi_agent_v1',
        name: 'spawn_agent',
        arguments: '{"task":"x"}',
        status: 'completed',
      },
    ]);
    expect(response.usage).toEqual({
      input_tokens: 40,
      input_tokens_details: { cached_tokens: 32, cache_write_tokens: 0 },
      output_tokens: 9,
      output_tokens_details: { reasoning_tokens: 4 },
      total_tokens: 49,
    });
    expect(usage).toEqual({ promptTokens: 40, completionTokens: 9, totalTokens: 49, cachedTokens: 32, reasoningTokens: 4 });
  });

  it('a message sent whole in its done item, and an incomplete response', async () => {
    const { stream } = await read([
      {
        type: 'response.output_item.done',
        output_index: 0,
        item: { type: 'message', id: 'msg_up', role: 'assistant', content: [{ type: 'output_text', text: 'Once upon' }] },
      },
      { type: 'response.incomplete', response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } } },
    ]);
    const { response } = stream.result();
    expect(response).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
    expect(response.output).toEqual([
      expect.objectContaining({ type: 'message', status: 'incomplete', content: [expect.objectContaining({ text: 'Once upon' })] }),
    ]);
  });

  it('a failure event after output ends the stream in-band', async () => {
    const { types, stream } = await read([
      { type: 'response.output_text.delta', item_id: 'msg_up', output_index: 0, content_index: 0, delta: 'Hel' },
      { type: 'response.failed', response: { status: 'failed', error: { code: 'server_error', message: 'boom' } } },
    ]);
    expect(types.slice(-2)).toEqual(['error', 'response.failed']);
    expect(stream.result().error).toBeInstanceOf(GatewayError);
  });

  it('waits for the first event that carries output', async () => {
    const events: ResponseStreamEvent[] = [
      { type: 'response.created', response: { id: 'resp_up' } },
      { type: 'response.output_item.added', output_index: 0, item: { type: 'reasoning', id: 'rs_1', summary: [] } },
      { type: 'response.output_text.delta', item_id: 'msg_up', output_index: 1, delta: 'Hi' },
      { type: 'response.in_progress', response: {} },
    ];
    expect(events.map(carriesOutput)).toEqual([false, false, true, false]);
    const passed: string[] = [];
    for await (const event of fromFirstOutput(from(events) as AsyncIterable<ResponseStreamEvent>)) passed.push(event.type);
    expect(passed).toEqual(['response.output_text.delta', 'response.in_progress']);
  });
});
