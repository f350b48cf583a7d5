import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/index.js';
import { ChatToolNames } from './chat-tool-names.js';
import { streamEventSchemaErrors } from './openai-responses-schema-contract.js';
import type { ResponseContext } from './response-object.js';
import { ResponsesEventStream, type ResponsesServerSentEvent } from './responses-event-stream.js';

/** The chunks of a recorded chat stream (`data: {…}` lines, without `[DONE]`). */
function recordedChunks(name: string): unknown[] {
  const text = readFileSync(new URL(`../../../test/fixtures/openai/${name}`, import.meta.url), 'utf8');
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => JSON.parse(line.slice('data: '.length)) as unknown);
}

function streamContext(): ResponseContext {
  let next = 0;
  return { id: 'resp_stream', createdAt: 1_727_889_370, model: 'chat', request: {}, newId: (prefix) => `${prefix}_${++next}`, now: () => 1_727_889_371 };
}

async function* source(chunks: unknown[], failure?: unknown): AsyncGenerator<unknown> {
  for (const chunk of chunks) yield chunk;
  if (failure !== undefined) throw failure;
}

interface StreamEvent {
  type: string;
  sequence_number: number;
  [field: string]: unknown;
}

async function collect(stream: ResponsesEventStream, chunks: AsyncIterable<unknown>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const sent of stream.events(chunks)) events.push(parse(sent));
  return events;
}

/** Every event must be named like its type, numbered in order from 0, and valid in OpenAI's published schema. */
function parse(sent: ResponsesServerSentEvent): StreamEvent {
  const event = JSON.parse(sent.data) as StreamEvent;
  expect(sent.event).toBe(event.type);
  expect(streamEventSchemaErrors(event)).toEqual([]);
  return event;
}

function expectNumbered(events: StreamEvent[]): void {
  expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
}

function chunk(delta: Record<string, unknown>, finishReason: string | null = null): unknown {
  return { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] };
}

function call(index: number, fields: { id?: string; name?: string; arguments?: string }): Record<string, unknown> {
  return {
    tool_calls: [
      {
        index,
        ...(fields.id === undefined ? {} : { id: fields.id, type: 'function' }),
        function: { ...(fields.name === undefined ? {} : { name: fields.name }), arguments: fields.arguments ?? '' },
      },
    ],
  };
}

const USAGE = {
  id: 'c',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'm',
  choices: [],
  usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
};

const TEXT_EVENTS = [
  'response.output_item.added',
  'response.content_part.added',
  'response.output_text.delta',
  'response.output_text.done',
  'response.content_part.done',
  'response.output_item.done',
];
const CALL_EVENTS = [
  'response.output_item.added',
  'response.function_call_arguments.delta',
  'response.function_call_arguments.done',
  'response.output_item.done',
];

/** Event types with runs of deltas collapsed, to compare orders. */
function shape(events: StreamEvent[]): string[] {
  return events.map((event) => event.type).filter((type, index, types) => !(type.endsWith('.delta') && types[index - 1] === type));
}

describe('ResponsesEventStream', () => {
  it('streams a recorded text completion in the order OpenAI sends it, ending with the usage', async () => {
    const stream = new ResponsesEventStream(streamContext());
    const events = await collect(stream, source(recordedChunks('chat-completion-stream.sse')));
    expectNumbered(events);
    expect(shape(events)).toEqual(['response.created', 'response.in_progress', ...TEXT_EVENTS, 'response.completed']);
    expect(events[0]).toMatchObject({ response: { id: 'resp_stream', status: 'in_progress', output: [] } });
    expect(events[2]).toMatchObject({ output_index: 0, item: { type: 'message', id: 'msg_1', status: 'in_progress', role: 'assistant', content: [] } });
    const text = events
      .filter((event) => event.type === 'response.output_text.delta')
      .map((event) => event['delta'] as string)
      .join('');
    expect(text).toBe('Hello! How can I assist you today?');
    expect(events.find((event) => event.type === 'response.output_text.done')).toMatchObject({ item_id: 'msg_1', output_index: 0, content_index: 0, text });
    const completed = events.at(-1);
    expect(completed).toMatchObject({
      response: {
        status: 'completed',
        output: [{ type: 'message', id: 'msg_1', status: 'completed', content: [{ type: 'output_text', text, annotations: [], logprobs: [] }] }],
        usage: { input_tokens: 8, output_tokens: 9, total_tokens: 17 },
      },
    });
    expect(stream.result()).toEqual({
      response: completed?.['response'],
      usage: { promptTokens: 8, completionTokens: 9, totalTokens: 17, cachedTokens: 0, reasoningTokens: 0 },
    });
  });

  it('streams a recorded tool call as one function_call item with its arguments in pieces', async () => {
    const events = await collect(new ResponsesEventStream(streamContext()), source(recordedChunks('chat-completion-stream-tool-call.sse')));
    expectNumbered(events);
    expect(shape(events)).toEqual(['response.created', 'response.in_progress', ...CALL_EVENTS, 'response.completed']);
    expect(events[2]).toMatchObject({
      item: { type: 'function_call', id: 'fc_1', call_id: 'call_HjeqP7YeRkoNj0de9e3U4X4B', name: 'read_file', arguments: '', status: 'in_progress' },
    });
    expect(events.find((event) => event.type === 'response.function_call_arguments.done')).toMatchObject({
      item_id: 'fc_1',
      name: 'read_file',
      arguments: '{"path":"README.md"}',
    });
    expect(events.at(-1)).toMatchObject({ response: { status: 'completed', service_tier: 'default', usage: { input_tokens: 60, output_tokens: 15 } } });
  });

  it("streams a call of a namespace's function with its name and namespace in every item, as OpenAI does", async () => {
    const names = ChatToolNames.of([{ type: 'namespace', name: 'multi_agent_v1', description: 'Agents.', tools: [{ type: 'function', name: 'wait_agent' }] }]);
    const chunks = [
      chunk(call(0, { id: 'call_w', name: names.chatName('wait_agent', 'multi_agent_v1'), arguments: '{"targets":' })),
      chunk(call(0, { arguments: '["a"]}' })),
      chunk({}, 'tool_calls'),
      USAGE,
    ];
    const events = await collect(new ResponsesEventStream({ ...streamContext(), toolName: (name) => names.qualified(name) }), source(chunks));
    expectNumbered(events);
    for (const event of events) expect(streamEventSchemaErrors(event)).toEqual([]);
    const item = { type: 'function_call', id: 'fc_1', call_id: 'call_w', namespace: 'multi_agent_v1', name: 'wait_agent' };
    expect(events.find((event) => event.type === 'response.output_item.added')).toMatchObject({ item: { ...item, arguments: '', status: 'in_progress' } });
    expect(events.find((event) => event.type === 'response.function_call_arguments.done')).toMatchObject({
      name: 'wait_agent',
      arguments: '{"targets":["a"]}',
    });
    expect(events.find((event) => event.type === 'response.output_item.done')).toMatchObject({
      item: { ...item, arguments: '{"targets":["a"]}', status: 'completed' },
    });
    expect(events.at(-1)).toMatchObject({ response: { output: [{ ...item, arguments: '{"targets":["a"]}' }] } });
  });

  it('ends the text before the tool calls, and sends each call whole, in order, even when the upstream interleaves them', async () => {
    const chunks = [
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'Checking ' }),
      chunk({ content: 'both.' }),
      chunk(call(0, { id: 'call_a', name: 'get_weather', arguments: '{"city":' })),
      chunk(call(1, { id: 'call_b', name: 'get_weather', arguments: '{"city":' })),
      chunk(call(0, { arguments: '"Paris"}' })),
      chunk(call(1, { arguments: '"Rome"}' })),
      chunk({}, 'tool_calls'),
      USAGE,
    ];
    const events = await collect(new ResponsesEventStream(streamContext()), source(chunks));
    expectNumbered(events);
    expect(shape(events)).toEqual(['response.created', 'response.in_progress', ...TEXT_EVENTS, ...CALL_EVENTS, ...CALL_EVENTS, 'response.completed']);
    const done = events.filter((event) => event.type === 'response.output_item.done').map((event) => event['item']);
    expect(done).toEqual([
      {
        type: 'message',
        id: 'msg_1',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'Checking both.', annotations: [], logprobs: [] }],
      },
      { type: 'function_call', id: 'fc_2', call_id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' },
      { type: 'function_call', id: 'fc_3', call_id: 'call_b', name: 'get_weather', arguments: '{"city":"Rome"}', status: 'completed' },
    ]);
    const rome = events.filter((event) => event.type === 'response.function_call_arguments.delta' && event['item_id'] === 'fc_3');
    expect(rome.map((event) => [event['output_index'], event['delta']])).toEqual([
      [2, '{"city":'],
      [2, '"Rome"}'],
    ]);
    expect(events.at(-1)).toMatchObject({ response: { output: done, usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 } } });
  });

  it('opens a new message for text that comes after the tool calls', async () => {
    const chunks = [
      chunk(call(0, { id: 'call_a', name: 'lookup', arguments: '{}' })),
      chunk({ content: 'Also, ' }),
      chunk({ content: 'done.' }),
      chunk({}, 'tool_calls'),
    ];
    const events = await collect(new ResponsesEventStream(streamContext()), source(chunks));
    expect(shape(events)).toEqual(['response.created', 'response.in_progress', ...CALL_EVENTS, ...TEXT_EVENTS, 'response.completed']);
    expect(events.at(-1)).toMatchObject({
      response: {
        output: [
          { type: 'function_call', call_id: 'call_a' },
          { type: 'message', id: 'msg_2', content: [{ text: 'Also, done.' }] },
        ],
      },
    });
  });

  it('answers an empty completion with no output items', async () => {
    const events = await collect(new ResponsesEventStream(streamContext()), source([chunk({ role: 'assistant', content: '' }), chunk({}, 'stop')]));
    expect(shape(events)).toEqual(['response.created', 'response.in_progress', 'response.completed']);
    expect(events.at(-1)).toMatchObject({ response: { status: 'completed', output: [] } });
    expect(events.at(-1)?.['response']).not.toHaveProperty('usage');
  });

  it('ends with response.incomplete when the upstream stopped at the token limit', async () => {
    const stream = new ResponsesEventStream(streamContext());
    const events = await collect(stream, source([chunk({ content: 'Once upon a' }), chunk({}, 'length'), USAGE]));
    expect(shape(events)).toEqual(['response.created', 'response.in_progress', ...TEXT_EVENTS, 'response.incomplete']);
    expect(events.find((event) => event.type === 'response.output_item.done')).toMatchObject({ item: { status: 'incomplete' } });
    expect(events.at(-1)).toMatchObject({ response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, completed_at: null } });
    expect(stream.result().response.status).toBe('incomplete');
  });

  it('streams a refusal as a refusal part', async () => {
    const events = await collect(
      new ResponsesEventStream(streamContext()),
      source([chunk({ refusal: "I can't " }), chunk({ refusal: 'help.' }), chunk({}, 'stop')]),
    );
    expect(shape(events)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.refusal.delta',
      'response.refusal.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.find((event) => event.type === 'response.refusal.done')).toMatchObject({ refusal: "I can't help." });
  });

  it('sends a failure after the first chunk in-band: an error event, then response.failed, and keeps it for the record', async () => {
    const stream = new ResponsesEventStream(streamContext());
    const failure = new GatewayError('upstream_timeout', 'The upstream stopped sending.');
    const events = await collect(stream, source([chunk({ content: 'Half an ans' })], failure));
    expectNumbered(events);
    expect(shape(events)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'error',
      'response.failed',
    ]);
    const error = { code: 'upstream_timeout', message: 'The upstream stopped sending.', param: null };
    expect(events.at(-2)).toEqual({ type: 'error', ...error, error: { type: 'upstream_error', ...error }, sequence_number: 5 });
    expect(events.at(-1)).toMatchObject({
      response: {
        status: 'failed',
        error: { code: 'server_error', message: 'The upstream stopped sending.' },
        output: [{ type: 'message', status: 'incomplete', content: [{ text: 'Half an ans' }] }],
      },
    });
    expect(stream.result()).toMatchObject({ response: { status: 'failed' }, error: failure });
  });

  it('says rate_limit_exceeded in the failed response for a 429, and hides the message of an unexpected error', async () => {
    const limited = await collect(
      new ResponsesEventStream(streamContext()),
      source([chunk({ content: 'a' })], new GatewayError('upstream_rate_limited', 'Slow down.')),
    );
    expect(limited.at(-1)).toMatchObject({ response: { error: { code: 'rate_limit_exceeded' } } });
    const crashed = await collect(new ResponsesEventStream(streamContext()), source([chunk({ content: 'a' })], new Error('secret detail')));
    expect(crashed.at(-2)).toMatchObject({ code: 'internal_error', message: 'The gateway failed while streaming the response.' });
  });

  it('treats an in-band chat error chunk as a failure', async () => {
    const events = await collect(
      new ResponsesEventStream(streamContext()),
      source([chunk({ content: 'a' }), { error: { message: 'overloaded', type: 'server_error' } }]),
    );
    expect(events.at(-2)).toMatchObject({ type: 'error', code: 'upstream_error', message: 'overloaded' });
  });

  it('throws a failure before the first chunk, having sent nothing, so the service can still answer with JSON', async () => {
    const stream = new ResponsesEventStream(streamContext());
    const sent: ResponsesServerSentEvent[] = [];
    const failure = new GatewayError('no_upstream_available', 'No route.');
    await expect(async () => {
      for await (const event of stream.events(source([], failure))) sent.push(event);
    }).rejects.toBe(failure);
    expect(sent).toEqual([]);
  });

  it('stops the upstream when the client leaves early', async () => {
    let closed = false;
    async function* upstream(): AsyncGenerator<unknown> {
      try {
        yield chunk({ content: 'a' });
        yield chunk({ content: 'b' });
      } finally {
        closed = true;
      }
    }
    const stream = new ResponsesEventStream(streamContext());
    for await (const event of stream.events(upstream())) {
      if (event.event === 'response.output_text.delta') break;
    }
    expect(closed).toBe(true);
    expect(stream.result().response).toMatchObject({ status: 'in_progress', output: [{ type: 'message', content: [{ text: 'a' }] }] });
  });
});
