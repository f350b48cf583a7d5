import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';
import { startFakeAnthropicUpstream, type FakeAnthropicUpstream } from '../fake-upstreams/anthropic-upstream.js';
import { conformanceErrors } from '../support/openai-conformance.js';
import { resetCredentials } from '../support/reset-credentials.js';

const API_KEY = 'sk-ant-api03-test-key';
const UPSTREAM_MODEL = 'claude-sonnet-4-20250514';
const RECORDED_TEXT = (JSON.parse(readFileSync(new URL('../fixtures/anthropic/message.json', import.meta.url), 'utf8')) as { content: Array<{ text: string }> })
  .content[0]?.text as string;

let upstream: FakeAnthropicUpstream;
let running: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  upstream = await startFakeAnthropicUpstream({ apiKey: API_KEY });
  running = await startTestGateway({
    upstreams: [
      { id: 'claude', provider: 'anthropic', base_url: upstream.url, api_key: API_KEY },
      // The same fake, for the error tests, so that a failing credential never affects the others.
      { id: 'claude-errors', provider: 'anthropic', base_url: upstream.url, api_key: API_KEY },
      { id: 'claude-wrong-key', provider: 'anthropic', base_url: upstream.url, api_key: 'sk-ant-revoked' },
    ],
    models: [
      { id: 'claude-sonnet', type: 'chat', owned_by: 'anthropic', routes: [{ upstream: 'claude', model: UPSTREAM_MODEL }] },
      { id: 'claude-errors', type: 'chat', routes: [{ upstream: 'claude-errors', model: UPSTREAM_MODEL }] },
      { id: 'claude-wrong-key', type: 'chat', routes: [{ upstream: 'claude-wrong-key', model: UPSTREAM_MODEL }] },
    ],
  });
  client = running.client;
});

afterAll(async () => {
  await running?.close();
  await upstream?.close();
});

beforeEach(() => {
  resetCredentials(running.gateway);
  upstream.options = {};
  upstream.requests.length = 0;
});

function lastRequest() {
  const request = upstream.requests.at(-1);
  if (request === undefined) throw new Error('the fake Anthropic upstream received nothing');
  return request as { method: string; path: string; headers: Record<string, string | undefined>; body: Record<string, unknown> };
}

describe('chat completions through the Anthropic Messages API, not streamed', () => {
  it('answers with the recorded message as a chat.completion, and sends Anthropic a converted request', async () => {
    const completion = await client.chat.completions.create({
      model: 'claude-sonnet',
      messages: [
        { role: 'system', content: 'You are a medieval historian.' },
        { role: 'developer', content: 'Be brief.' },
        { role: 'user', content: 'how many angels can dance' },
        { role: 'user', content: 'on the head of a pin' },
      ],
      temperature: 1.5,
      top_p: 0.9,
      stop: ['THE END'],
      user: 'user-7',
    });
    expect(completion).toMatchObject({ id: 'msg_01Pvyf26bY17RcjmWfJsXGBn', object: 'chat.completion', model: 'claude-sonnet' });
    expect(completion.choices).toEqual([
      { index: 0, message: { role: 'assistant', content: RECORDED_TEXT, refusal: null }, logprobs: null, finish_reason: 'stop' },
    ]);
    expect(completion.usage).toEqual({ prompt_tokens: 18, completion_tokens: 254, total_tokens: 272, prompt_tokens_details: { cached_tokens: 0 } });
    expect(Math.abs(completion.created - Date.now() / 1000)).toBeLessThan(60);
    expect(conformanceErrors('CreateChatCompletionResponse', completion)).toEqual([]);

    const request = lastRequest();
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/v1/messages');
    expect(request.headers['x-api-key']).toBe(API_KEY);
    expect(request.headers['anthropic-version']).toBe('2023-06-01');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['authorization']).toBeUndefined();
    expect(request.body).toEqual({
      model: UPSTREAM_MODEL,
      system: 'You are a medieval historian.\n\nBe brief.',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'how many angels can dance' },
            { type: 'text', text: 'on the head of a pin' },
          ],
        },
      ],
      max_tokens: 4096,
      temperature: 1,
      top_p: 0.9,
      stop_sequences: ['THE END'],
      metadata: { user_id: 'user-7' },
    });
  });

  it('returns tool_use as tool_calls, and sends tools, tool_choice, tool_use and tool_result blocks', async () => {
    const completion = await client.chat.completions.create({
      model: 'claude-sonnet',
      max_completion_tokens: 512,
      tools: [
        {
          type: 'function',
          function: {
            name: 'getWeather',
            description: 'Weather for a city',
            parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
          },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'getWeather' } },
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather in Osaka, then Tokyo?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'toolu_earlier', type: 'function', function: { name: 'getWeather', arguments: '{"location":"Osaka"}' } }],
        },
        { role: 'tool', tool_call_id: 'toolu_earlier', content: 'Sunny, 24°C' },
      ],
    });
    expect(completion.choices[0]?.finish_reason).toBe('tool_calls');
    expect(completion.choices[0]?.message.content).toBeNull();
    expect(completion.choices[0]?.message.tool_calls).toEqual([
      { id: 'toolu_01MhUGx2K4rTe9D6nZxtGURs', type: 'function', function: { name: 'getWeather', arguments: '{"location":"Tokyo"}' } },
    ]);
    expect(completion.usage).toMatchObject({ prompt_tokens: 822, completion_tokens: 33, total_tokens: 855 });
    expect(conformanceErrors('CreateChatCompletionResponse', completion)).toEqual([]);

    expect(lastRequest().body).toEqual({
      model: UPSTREAM_MODEL,
      max_tokens: 512,
      tools: [
        {
          name: 'getWeather',
          description: 'Weather for a city',
          input_schema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
        },
      ],
      tool_choice: { type: 'tool', name: 'getWeather' },
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather in Osaka, then Tokyo?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          ],
        },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_earlier', name: 'getWeather', input: { location: 'Osaka' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_earlier', content: 'Sunny, 24°C' }] },
      ],
    });
  });
});

describe('chat completions through the Anthropic Messages API, streamed', () => {
  it('streams the recorded text as OpenAI chunks, then usage for a client that asked', async () => {
    upstream.options = { lineEnding: 'crlf' };
    const stream = await client.chat.completions.create({
      model: 'claude-sonnet',
      messages: [{ role: 'user', content: 'Say hello there!' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    for (const chunk of chunks) expect(conformanceErrors('CreateChatCompletionStreamResponse', chunk)).toEqual([]);
    expect(chunks[0]?.choices[0]?.delta).toEqual({ role: 'assistant', content: '' });
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe('Hello there!');
    expect(chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.finish_reason)).filter((reason) => reason !== null)).toEqual(['stop']);
    const last = chunks.at(-1);
    expect(last?.choices).toEqual([]);
    expect(last?.usage).toEqual({ prompt_tokens: 11, completion_tokens: 6, total_tokens: 17, prompt_tokens_details: { cached_tokens: 0 } });
    expect(new Set(chunks.map((chunk) => chunk.id))).toEqual(new Set(['msg_4QpJur2dWWDjF6C758FbBw5vm12BaVipnK']));
    expect(new Set(chunks.map((chunk) => chunk.model))).toEqual(new Set(['claude-sonnet']));

    expect(lastRequest().body).toEqual({
      model: UPSTREAM_MODEL,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Say hello there!' }] }],
      max_tokens: 4096,
      stream: true,
    });
  });

  it('leaves out the usage chunk for a client that did not ask for it', async () => {
    const stream = await client.chat.completions.create({ model: 'claude-sonnet', messages: [{ role: 'user', content: 'Hi' }], stream: true });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.every((chunk) => chunk.choices.length === 1 && chunk.usage === undefined)).toBe(true);
  });

  it('streams a tool call with its index, id, name and arguments in order', async () => {
    const stream = await client.chat.completions.create({
      model: 'claude-sonnet',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } } }],
      tool_choice: 'required',
      parallel_tool_calls: false,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    const calls: Array<{ id: string; name: string; arguments: string }> = [];
    let finishReason: string | null = null;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      expect(conformanceErrors('CreateChatCompletionStreamResponse', chunk)).toEqual([]);
      usage ??= chunk.usage;
      for (const choice of chunk.choices) {
        text += choice.delta.content ?? '';
        finishReason = choice.finish_reason ?? finishReason;
        for (const call of choice.delta.tool_calls ?? []) {
          const entry = (calls[call.index] ??= { id: '', name: '', arguments: '' });
          entry.id += call.id ?? '';
          entry.name += call.function?.name ?? '';
          entry.arguments += call.function?.arguments ?? '';
        }
      }
    }
    expect(text).toBe("I'll check the current weather in Paris for you.");
    expect(calls).toEqual([{ id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', name: 'get_weather', arguments: '{"location": "Paris"}' }]);
    expect(finishReason).toBe('tool_calls');
    expect(usage).toMatchObject({ prompt_tokens: 377, completion_tokens: 65, total_tokens: 442 });
    expect(lastRequest().body).toMatchObject({ tool_choice: { type: 'any', disable_parallel_tool_use: true }, stream: true });
  });

  it('counts prompt-cache reads and writes in prompt_tokens and reports the reads as cached', async () => {
    upstream.options = { streamFixture: 'stream-tool-use-cached.sse' };
    const stream = await client.chat.completions.create({
      model: 'claude-sonnet',
      messages: [{ role: 'user', content: 'read the foo file' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) usage ??= chunk.usage;
    expect(usage).toEqual({ prompt_tokens: 14017, completion_tokens: 61, total_tokens: 14078, prompt_tokens_details: { cached_tokens: 13993 } });
  });

  it('reports an error event after the first chunk in-band, which the SDK raises', async () => {
    upstream.options = { streamFixture: 'stream-error.sse' };
    const stream = await client.chat.completions.create({ model: 'claude-sonnet', messages: [{ role: 'user', content: 'yo' }], stream: true });
    const seen: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    const consume = async () => {
      for await (const chunk of stream) seen.push(chunk);
    };
    const error = await consume().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    // What failed upstream is for the operator's log; the caller is told what happened and the request id.
    expect((error as InstanceType<typeof OpenAI.APIError>).message).toMatch(/upstream provider failed or could not be reached.*request id /);
    expect(seen.map((chunk) => chunk.choices[0]?.delta)).toEqual([{ role: 'assistant', content: '' }]);
  });
});

describe('Anthropic errors as OpenAI errors', () => {
  async function failure(model: string, stream = false): Promise<InstanceType<typeof OpenAI.APIError>> {
    const caught = await client.chat.completions
      .create({ model, messages: [{ role: 'user', content: 'Hi' }], stream })
      .then(async (result) => {
        if (stream) for await (const _chunk of result as AsyncIterable<unknown>) void _chunk;
        return result;
      })
      .catch((error: unknown) => error);
    expect(caught).toBeInstanceOf(OpenAI.APIError);
    return caught as InstanceType<typeof OpenAI.APIError>;
  }

  it('429 rate_limit_error → 429 upstream_rate_limited with the upstream Retry-After', async () => {
    upstream.failNext({ status: 429, headers: { 'retry-after': '11' } });
    const error = await failure('claude-errors');
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(error.status).toBe(429);
    expect(error.code).toBe('upstream_rate_limited');
    expect(error.headers?.get('retry-after')).toBe('11');
  });

  it('400 invalid_request_error → 400 upstream_bad_request with Anthropic’s message, streamed or not', async () => {
    upstream.failNext({ status: 400 });
    const error = await failure('claude-errors');
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.code).toBe('upstream_bad_request');
    expect(error.message).toContain('tools.0.custom.input_schema.type: Field required');

    upstream.failNext({ status: 400 });
    const streamed = await failure('claude-errors', true);
    expect(streamed.status).toBe(400);
    expect(streamed.code).toBe('upstream_bad_request');
  });

  it('401 authentication_error (a wrong x-api-key) → 502 upstream_auth_failed', async () => {
    const error = await failure('claude-wrong-key');
    expect(error.status).toBe(502);
    expect(error.code).toBe('upstream_auth_failed');
    expect(error.message).toMatch(/refused the gateway's credentials; the gateway's operator must fix them \(request id /);
    // Which credential, and the provider's words about it, are the operator's, not the caller's.
    expect(error.message).not.toContain('invalid x-api-key');
    expect(error.message).not.toContain('claude-wrong-key');
    expect(lastRequest().headers['x-api-key']).toBe('sk-ant-revoked');
  });

  it('529 overloaded_error → 502 upstream_error', async () => {
    upstream.failNext({ status: 529 });
    const error = await failure('claude-errors', true);
    expect(error.status).toBe(502);
    expect(error.code).toBe('upstream_error');
    expect(error.message).not.toContain('claude-errors');
  });
});
