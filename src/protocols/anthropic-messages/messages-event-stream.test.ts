import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/index.js';
import { streamEventSchemaErrors } from './anthropic-messages-schema-contract.js';
import { MessagesEventStream } from './messages-event-stream.js';
import type { MessagesServerSentEvent } from './messages-types.js';

function chunk(delta: Record<string, unknown>, finishReason: string | null = null): unknown {
  return { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt', choices: [{ index: 0, delta, finish_reason: finishReason }] };
}

const USAGE = {
  id: 'c',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'gpt',
  choices: [],
  usage: { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150, prompt_tokens_details: { cached_tokens: 100 } },
};

async function* source(chunks: unknown[], failure?: Error): AsyncGenerator<unknown> {
  for (const value of chunks) yield value;
  if (failure !== undefined) throw failure;
}

async function collect(events: AsyncIterable<MessagesServerSentEvent>): Promise<Array<{ event: string; data: Record<string, unknown> }>> {
  const collected = [];
  for await (const event of events) collected.push({ event: event.event, data: JSON.parse(event.data) as Record<string, unknown> });
  return collected;
}

const CONTEXT = { id: 'msg_1', model: 'public' };

describe('MessagesEventStream', () => {
  it("writes text and tool calls as Anthropic's blocks, in its order, with the usage and stop reason at the end", async () => {
    const events = await collect(
      new MessagesEventStream(CONTEXT).events(
        source([
          chunk({ role: 'assistant', content: '' }),
          chunk({ content: 'Let me ' }),
          chunk({ content: 'look.' }),
          chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'Read', arguments: '' } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: '{"file_path":' } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: '"/a"}' } }] }),
          chunk({ tool_calls: [{ index: 1, id: 'call_2', type: 'function', function: { name: 'Bash', arguments: '{}' } }] }),
          chunk({}, 'tool_calls'),
          USAGE,
        ]),
      ),
    );
    expect(events.map(({ event }) => event)).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    for (const { event, data } of events) {
      expect(data['type']).toBe(event);
      expect(streamEventSchemaErrors(data), event).toEqual([]);
    }
    expect(events[0]?.data).toEqual({
      type: 'message_start',
      message: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'public',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      },
    });
    expect(events[2]?.data).toEqual({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    expect(events[3]?.data).toEqual({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Let me ' } });
    expect(events[6]?.data).toEqual({ type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'call_1', name: 'Read', input: {} } });
    expect(events[8]?.data).toEqual({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '"/a"}' } });
    expect(events[10]?.data).toMatchObject({ index: 2, content_block: { type: 'tool_use', id: 'call_2', name: 'Bash' } });
    // Anthropic's input_tokens leave out the cache reads that OpenAI's prompt_tokens count.
    expect(events[13]?.data).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: { input_tokens: 20, output_tokens: 30, cache_creation_input_tokens: 0, cache_read_input_tokens: 100 },
    });
  });

  it.each([
    ['stop', 'end_turn'],
    ['length', 'max_tokens'],
    ['content_filter', 'refusal'],
  ])('says finish_reason %s as stop_reason %s', async (finishReason, stopReason) => {
    const events = await collect(new MessagesEventStream(CONTEXT).events(source([chunk({ content: 'x' }, finishReason)])));
    expect(events.find(({ event }) => event === 'message_delta')?.data['delta']).toEqual({ stop_reason: stopReason, stop_sequence: null });
  });

  it('ends a stream that failed after it began with an error event in the words the caller gives, and no message_stop', async () => {
    const events = await collect(
      new MessagesEventStream(CONTEXT, (error) => ({ type: 'overloaded_error', message: `said: ${(error as Error).message}` })).events(
        source([chunk({ content: 'Half' })], new Error('reset')),
      ),
    );
    expect(events.map(({ event }) => event)).toEqual(['message_start', 'ping', 'content_block_start', 'content_block_delta', 'error']);
    expect(events.at(-1)?.data).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'said: reset' } });
  });

  it("fails on the arguments of a tool call whose block was closed: Anthropic's blocks never interleave", async () => {
    const stream = new MessagesEventStream(CONTEXT).events(
      source([
        chunk({ tool_calls: [{ index: 0, id: 'a', function: { name: 'A', arguments: '{' } }] }),
        chunk({ tool_calls: [{ index: 1, id: 'b', function: { name: 'B', arguments: '{' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '}' } }] }),
      ]),
    );
    await expect(collect(stream)).rejects.toThrow(GatewayError);
  });
});
