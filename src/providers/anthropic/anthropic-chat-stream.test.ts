import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { splitIntoPieces } from '../../../test/fake-upstreams/sse-framing.js';
import { GatewayError } from '../../errors/index.js';
import type { ChatStreamEvent } from '../provider-adapter.js';
import { readEvents } from '../shared/read-events.js';
import { AnthropicChatEvents } from './anthropic-chat-stream.js';

const NOW = 1_750_000_000;

function fixture(name: string): Buffer {
  return readFileSync(new URL(`../../../test/fixtures/anthropic/${name}`, import.meta.url));
}

/** The body as the network might deliver it: cut at odd byte offsets (inside lines, `data:`, UTF-8). */
async function* body(bytes: Buffer, sizes?: readonly number[]): AsyncGenerator<Buffer> {
  for (const piece of splitIntoPieces(bytes, sizes)) yield piece;
}

async function collect(bytes: Buffer, sizes?: readonly number[]): Promise<ChatStreamEvent[]> {
  const events: ChatStreamEvent[] = [];
  for await (const event of readEvents(body(bytes, sizes), new AnthropicChatEvents('claude', NOW), 'claude')) events.push(event);
  return events;
}

async function failure(bytes: Buffer): Promise<{ error: GatewayError; events: ChatStreamEvent[] }> {
  const events: ChatStreamEvent[] = [];
  try {
    for await (const event of readEvents(body(bytes), new AnthropicChatEvents('claude', NOW), 'claude')) events.push(event);
  } catch (error) {
    if (error instanceof GatewayError) return { error, events };
    throw error;
  }
  throw new Error('expected the stream to fail');
}

type Chunk = {
  id: string;
  object: string;
  created: number;
  model: string;
  choices: Array<{ index: number; delta: Record<string, unknown>; finish_reason: string | null }>;
  usage?: Record<string, unknown>;
};

const chunks = (events: ChatStreamEvent[]) => events.map((event) => JSON.parse(event.data) as Chunk);
const deltas = (events: ChatStreamEvent[]) => chunks(events).flatMap((chunk) => chunk.choices.map((choice) => choice.delta));

describe('AnthropicChatEvents', () => {
  it('turns the recorded text stream, split at odd byte boundaries, into OpenAI chunks', async () => {
    for (const sizes of [[1], [3, 7, 13, 29], [4096]]) {
      const events = await collect(fixture('stream-text.sse'), sizes);
      const parsed = chunks(events);
      expect(parsed.map((chunk) => chunk.choices[0]?.delta ?? null)).toEqual([
        { role: 'assistant', content: '' },
        { content: 'Hello' },
        { content: ' there' },
        { content: '!' },
        {},
        null,
      ]);
      expect(parsed.map((chunk) => chunk.choices[0]?.finish_reason ?? null)).toEqual([null, null, null, null, 'stop', null]);
      for (const chunk of parsed) {
        expect(chunk).toMatchObject({
          id: 'msg_4QpJur2dWWDjF6C758FbBw5vm12BaVipnK',
          object: 'chat.completion.chunk',
          created: NOW,
          model: 'claude-3-opus-20240229',
        });
      }
      const last = events[events.length - 1];
      expect(last).toMatchObject({ usageOnly: true, usage: { promptTokens: 11, completionTokens: 6, totalTokens: 17 } });
      expect(parsed[parsed.length - 1]).toMatchObject({
        choices: [],
        usage: { prompt_tokens: 11, completion_tokens: 6, total_tokens: 17, prompt_tokens_details: { cached_tokens: 0 } },
      });
      expect(events.slice(0, -1).every((event) => !event.usageOnly && event.usage === null)).toBe(true);
      expect(events.map((event) => event.text).join('')).toBe('Hello there!');
    }
  });

  it('reads the stream with CRLF line ends too', async () => {
    const crlf = Buffer.from(fixture('stream-text.sse').toString('utf8').replace(/\n/g, '\r\n'));
    expect(
      deltas(await collect(crlf, [5, 1, 2]))
        .map((delta) => delta['content'] ?? '')
        .join(''),
    ).toBe('Hello there!');
  });

  it('streams a tool_use block after text as tool call 0, with its arguments in order', async () => {
    const events = await collect(fixture('stream-tool-use.sse'));
    const all = deltas(events);
    expect(
      all
        .filter((delta) => 'content' in delta)
        .map((delta) => delta['content'])
        .join(''),
    ).toBe("I'll check the current weather in Paris for you.");
    const toolDeltas = all.flatMap((delta) => (delta['tool_calls'] as Array<Record<string, unknown>> | undefined) ?? []);
    expect(toolDeltas[0]).toEqual({ index: 0, id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', type: 'function', function: { name: 'get_weather', arguments: '' } });
    // The empty first input_json_delta is not sent: it carries nothing.
    expect(toolDeltas.slice(1)).toEqual(['{"locati', 'on": "P', 'ar', 'is"}'].map((part) => ({ index: 0, function: { arguments: part } })));
    expect(chunks(events).find((chunk) => chunk.choices[0]?.finish_reason !== null && chunk.choices.length > 0)?.choices[0]?.finish_reason).toBe('tool_calls');
    expect(events[events.length - 1]?.usage).toEqual({ promptTokens: 377, completionTokens: 65, totalTokens: 442, cachedTokens: 0, cacheWriteTokens: 0 });
  });

  it('counts cache writes and reads in prompt tokens (recorded stream with trailing blanks after each JSON)', async () => {
    const events = await collect(fixture('stream-tool-use-cached.sse'));
    expect(chunks(events).at(-1)?.usage).toEqual({
      prompt_tokens: 14017,
      completion_tokens: 61,
      total_tokens: 14078,
      prompt_tokens_details: { cached_tokens: 13993 },
    });
    // The request log (and the console's Sessions page) gets the cache reads too.
    expect(events.at(-1)?.usage).toEqual({ promptTokens: 14017, completionTokens: 61, totalTokens: 14078, cachedTokens: 13993, cacheWriteTokens: 22 });
    const toolDeltas = deltas(events).flatMap((delta) => (delta['tool_calls'] as Array<{ function: { arguments: string } }> | undefined) ?? []);
    expect(toolDeltas.map((call) => call.function.arguments).join('')).toBe('{"file_path": "/tmp/blah/foo"}');
  });

  it('numbers tool calls among themselves, not by content block (composed stream: thinking, text, two tool_use blocks)', async () => {
    // Composed for this test in the recorded event shapes: no public recording with two tool_use blocks was found.
    const events = [
      {
        type: 'message_start',
        message: {
          id: 'msg_parallel',
          type: 'message',
          role: 'assistant',
          model: 'claude-sonnet-4-20250514',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 40, output_tokens: 1 },
        },
      },
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Two cities.' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Checking.' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_A', name: 'get_weather', input: {} } },
      { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"location": "Paris"}' } },
      { type: 'content_block_stop', index: 2 },
      { type: 'content_block_start', index: 3, content_block: { type: 'tool_use', id: 'toolu_B', name: 'get_weather', input: {} } },
      { type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: '{"location": "Tokyo"}' } },
      { type: 'content_block_stop', index: 3 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 90 } },
      { type: 'message_stop' },
    ];
    const sse = Buffer.from(events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join(''));
    const toolDeltas = deltas(await collect(sse)).flatMap((delta) => (delta['tool_calls'] as Array<Record<string, unknown>> | undefined) ?? []);
    expect(toolDeltas).toEqual([
      { index: 0, id: 'toolu_A', type: 'function', function: { name: 'get_weather', arguments: '' } },
      { index: 0, function: { arguments: '{"location": "Paris"}' } },
      { index: 1, id: 'toolu_B', type: 'function', function: { name: 'get_weather', arguments: '' } },
      { index: 1, function: { arguments: '{"location": "Tokyo"}' } },
    ]);
  });

  it('throws the in-stream overloaded error as a retryable upstream_error after the chunks before it', async () => {
    const { error, events } = await failure(fixture('stream-error.sse'));
    expect(error).toMatchObject({ code: 'upstream_error', status: 502, retryable: true });
    expect(error.message).toContain('overloaded_error');
    expect(deltas(events)).toEqual([{ role: 'assistant', content: '' }]);
  });

  it('throws when the stream ends without message_stop (a cut connection)', async () => {
    const whole = fixture('stream-text.sse').toString('utf8');
    const cut = Buffer.from(whole.slice(0, whole.indexOf('event: message_delta')));
    const { error, events } = await failure(cut);
    expect(error).toMatchObject({ code: 'upstream_error' });
    expect(events.some((event) => event.usageOnly)).toBe(false);
  });

  it('rejects an event that is not JSON', async () => {
    const { error } = await failure(Buffer.from('event: message_start\ndata: {not json\n\n'));
    expect(error.code).toBe('upstream_invalid_response');
  });
});
