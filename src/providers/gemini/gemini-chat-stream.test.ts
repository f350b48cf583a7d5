import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { conformanceErrors } from '../../../test/support/openai-conformance.js';
import { GatewayError } from '../../errors/index.js';
import type { ChatStreamEvent } from '../provider-adapter.js';
import { readEvents } from '../shared/read-events.js';
import { GeminiChatEvents } from './gemini-chat-stream.js';

interface Chunk {
  id: string;
  model: string;
  choices: Array<{
    index: number;
    delta: { role?: string; content?: string; tool_calls?: Array<{ index: number; id: string; type: string; function: { name: string; arguments: string } }> };
    finish_reason: string | null;
  }>;
  usage?: Record<string, unknown>;
}

function fixture(name: string): string {
  return readFileSync(new URL(`../../../test/fixtures/gemini/${name}`, import.meta.url), 'utf8');
}

/** The body as undici hands it over, cut at odd byte offsets (inside `data:`, CRLF, UTF-8). */
async function* pieces(text: string, sizes = [1, 3, 7, 13, 29]): AsyncIterableIterator<Buffer> {
  const bytes = Buffer.from(text, 'utf8');
  for (let offset = 0, index = 0; offset < bytes.length; index++) {
    const size = sizes[index % sizes.length] as number;
    yield bytes.subarray(offset, offset + size);
    offset += size;
  }
}

async function collect(body: string): Promise<ChatStreamEvent[]> {
  const events: ChatStreamEvent[] = [];
  for await (const event of readEvents(pieces(body), new GeminiChatEvents('gemini-a', 'requested-model'), 'gemini-a')) events.push(event);
  return events;
}

async function failure(body: string): Promise<GatewayError> {
  try {
    await collect(body);
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected the stream to fail');
}

const chunks = (events: ChatStreamEvent[]) => events.map((event) => JSON.parse(event.data) as Chunk);

describe('GeminiChatEvents', () => {
  it('streams a recorded answer as text deltas, one finish chunk, then a usage-only chunk', async () => {
    const events = await collect(fixture('stream-generate-content.sse'));
    const parsed = chunks(events);
    expect(parsed.map((chunk) => chunk.choices.map((choice) => [choice.delta, choice.finish_reason]))).toEqual([
      [[{ role: 'assistant', content: 'There are **3**' }, null]],
      [[{ content: ' "r"s in strawberry.\n\nst**r**awbe**rr**y' }, null]],
      [[{}, 'stop']],
      [],
    ]);
    expect(new Set(parsed.map((chunk) => chunk.id))).toEqual(new Set(['chatcmpl-bH6LaZW8Fp_3nsEPqtaSwQ4']));
    expect(parsed.every((chunk) => chunk.model === 'gemini-3-pro-preview')).toBe(true);
    expect(events.map((event) => event.usageOnly)).toEqual([false, false, false, true]);
    expect(events[3]?.usage).toEqual({ promptTokens: 9, completionTokens: 23 + 185, totalTokens: 217, reasoningTokens: 185 });
    expect(parsed[3]?.usage).toEqual({ prompt_tokens: 9, completion_tokens: 208, total_tokens: 217, completion_tokens_details: { reasoning_tokens: 185 } });
    expect(events.map((event) => event.text).join('')).toBe('There are **3** "r"s in strawberry.\n\nst**r**awbe**rr**y');
    for (const chunk of parsed) expect(conformanceErrors('CreateChatCompletionStreamResponse', chunk)).toEqual([]);
  });

  it('streams a recorded function call as one tool-call delta and finishes with tool_calls', async () => {
    const parsed = chunks(await collect(fixture('stream-generate-content-tool-call.sse')));
    expect(parsed).toHaveLength(3);
    expect(parsed[0]?.choices[0]?.delta).toEqual({
      role: 'assistant',
      tool_calls: [
        {
          index: 0,
          id: expect.stringMatching(/^call_[0-9a-f]{24}$/),
          type: 'function',
          function: { name: 'weather', arguments: '{"location":"San Francisco"}' },
        },
      ],
    });
    expect(parsed[1]?.choices).toEqual([{ index: 0, delta: {}, logprobs: null, finish_reason: 'tool_calls' }]);
    expect(parsed[2]?.usage).toMatchObject({ prompt_tokens: 29, completion_tokens: 60, total_tokens: 89 });
    for (const chunk of parsed) expect(conformanceErrors('CreateChatCompletionStreamResponse', chunk)).toEqual([]);
  });

  it('gives one finish_reason at the end when an older model put STOP on every chunk', async () => {
    const parsed = chunks(await collect(fixture('stream-gemini-pro-finish-on-every-chunk.sse')));
    expect(parsed.map((chunk) => chunk.choices[0]?.finish_reason)).toEqual([null, null, null, 'stop']);
    expect(parsed.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toMatch(/^In the quaint.*stronger than ever\.$/s);
    // No usageMetadata was recorded, so no usage chunk is made up.
    expect(parsed.at(-1)?.usage).toBeUndefined();
    expect(parsed[0]?.model).toBe('requested-model');
  });

  it('keeps two candidates apart by index', async () => {
    const body =
      'data: {"candidates":[{"content":{"parts":[{"text":"A"}],"role":"model"},"index":0},{"content":{"parts":[{"text":"B"}],"role":"model"},"index":1}]}\r\n\r\n' +
      'data: {"candidates":[{"content":{"parts":[{"text":"a"}],"role":"model"},"finishReason":"STOP","index":0},{"content":{"parts":[{"text":"b"}],"role":"model"},"finishReason":"MAX_TOKENS","index":1}]}\r\n\r\n';
    const parsed = chunks(await collect(body));
    expect(parsed.map((chunk) => chunk.choices.map((choice) => [choice.index, choice.delta.content ?? null, choice.finish_reason]))).toEqual([
      [
        [0, 'A', null],
        [1, 'B', null],
      ],
      [
        [0, 'a', null],
        [1, 'b', null],
      ],
      [
        [0, null, 'stop'],
        [1, null, 'length'],
      ],
    ]);
  });

  it('finishes a stream whose prompt was blocked with content_filter', async () => {
    const blocked = JSON.stringify(JSON.parse(fixture('prompt-blocked.json')));
    const parsed = chunks(await collect(`data: ${blocked}\r\n\r\n`));
    expect(parsed[0]?.choices).toEqual([{ index: 0, delta: { role: 'assistant' }, logprobs: null, finish_reason: 'content_filter' }]);
    expect(parsed[1]?.usage).toMatchObject({ prompt_tokens: 9, total_tokens: 9 });
  });

  it('throws a GatewayError for an error event sent after the stream started', async () => {
    const error = JSON.stringify(JSON.parse(fixture('errors/503-unavailable.json')));
    const first = fixture('stream-generate-content.sse').split('\r\n\r\n')[0] as string;
    const failed = await failure(`${first}\r\n\r\ndata: ${error}\r\n\r\n`);
    expect(failed).toMatchObject({ code: 'upstream_error', status: 502 });
    expect(failed.message).toContain('The model is overloaded');
  });

  it('finds an error body written into the stream without SSE framing', async () => {
    const first = fixture('stream-generate-content.sse').split('\r\n\r\n')[0] as string;
    const failed = await failure(`${first}\r\n\r\n${fixture('errors/500-internal.json')}`);
    expect(failed).toMatchObject({ code: 'upstream_error' });
    expect(failed.message).toContain('An internal error has occurred');
  });

  it('reports a stream that ended before any finish reason as an upstream error', async () => {
    const first = fixture('stream-generate-content.sse').split('\r\n\r\n')[0] as string;
    expect(await failure(`${first}\r\n\r\n`)).toMatchObject({
      code: 'upstream_error',
      message: expect.stringContaining('ended the stream before it finished'),
    });
    expect(await failure('data: {not json\r\n\r\n')).toMatchObject({ code: 'upstream_invalid_response' });
  });
});
