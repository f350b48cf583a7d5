import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';
import { fakeGeminiEmbedding, startFakeGeminiUpstream, type FakeGeminiUpstream } from '../fake-upstreams/gemini-upstream.js';
import { conformanceErrors } from '../support/openai-conformance.js';
import { resetCredentials } from '../support/reset-credentials.js';

const API_KEY = 'AIza-fake-gemini-key';
const RECORDED_TEXT = "There are **3** r's in strawberry.\n\nHere is the breakdown: st**r**awbe**rr**y.";
const STREAMED_TEXT = 'There are **3** "r"s in strawberry.\n\nst**r**awbe**rr**y';
const WEATHER_TOOL = {
  type: 'function' as const,
  function: {
    name: 'weather',
    description: 'The weather in a location',
    parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'], additionalProperties: false },
  },
};

let upstream: FakeGeminiUpstream;
let running: TestGateway;
let token: string;
let client: OpenAI;

beforeAll(async () => {
  upstream = await startFakeGeminiUpstream();
  running = await startTestGateway({
    upstreams: [
      { id: 'gemini-a', provider: 'gemini', base_url: upstream.url, api_key: API_KEY },
      // The same fake taking two inputs per call, to prove batches are put back in order.
      { id: 'gemini-small-batches', provider: 'gemini', base_url: upstream.url, api_key: API_KEY, max_embedding_inputs: 2 },
    ],
    models: [
      { id: 'gemini-flash', type: 'chat', owned_by: 'google', routes: [{ upstream: 'gemini-a', model: 'gemini-2.5-flash' }] },
      { id: 'gemini-embedding', type: 'embedding', owned_by: 'google', routes: [{ upstream: 'gemini-a', model: 'gemini-embedding-001' }] },
      { id: 'gemini-embedding-batched', type: 'embedding', routes: [{ upstream: 'gemini-small-batches', model: 'gemini-embedding-001' }] },
    ],
  });
  token = running.token;
  client = running.client;
});

afterAll(async () => {
  await running?.close();
  await upstream?.close();
});

beforeEach(() => {
  resetCredentials(running.gateway);
  upstream.requests.length = 0;
  upstream.options = {};
});

function onlyRequest() {
  expect(upstream.requests).toHaveLength(1);
  return upstream.requests[0] as (typeof upstream.requests)[number];
}

describe('chat through the Gemini adapter', () => {
  it('answers a completion converted from generateContent, with usage, and sends Gemini the converted body', async () => {
    const completion = await client.chat.completions.create({
      model: 'gemini-flash',
      messages: [
        { role: 'system', content: 'Count carefully.' },
        { role: 'user', content: 'How many r are in strawberry?' },
      ],
      temperature: 0.2,
      max_completion_tokens: 300,
      stop: ['END'],
    });
    expect(completion.choices).toHaveLength(1);
    expect(completion.choices[0]).toMatchObject({ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: RECORDED_TEXT } });
    expect(completion.usage).toMatchObject({
      prompt_tokens: 9,
      completion_tokens: 272,
      total_tokens: 281,
      completion_tokens_details: { reasoning_tokens: 244 },
    });
    expect(conformanceErrors('CreateChatCompletionResponse', completion)).toEqual([]);

    const received = onlyRequest();
    expect(received.method).toBe('POST');
    expect(received.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(received.headers['x-goog-api-key']).toBe(API_KEY);
    expect(received.headers['authorization']).toBeUndefined();
    expect(received.body).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'How many r are in strawberry?' }] }],
      systemInstruction: { parts: [{ text: 'Count carefully.' }] },
      generationConfig: { temperature: 0.2, maxOutputTokens: 300, stopSequences: ['END'] },
    });
  });

  it('streams chunks converted from the Gemini events, then the usage chunk the client asked for', async () => {
    const stream = await client.chat.completions.create({
      model: 'gemini-flash',
      messages: [{ role: 'user', content: 'How many r are in strawberry?' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    for (const chunk of chunks) expect(conformanceErrors('CreateChatCompletionStreamResponse', chunk)).toEqual([]);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe(STREAMED_TEXT);
    const finishes = chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.finish_reason)).filter((reason) => reason !== null);
    expect(finishes).toEqual(['stop']);
    const last = chunks.at(-1);
    expect(last?.choices).toEqual([]);
    expect(last?.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 208, total_tokens: 217 });

    const received = onlyRequest();
    expect(received.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent');
    expect(received.query.get('alt')).toBe('sse');
    expect(received.headers['x-goog-api-key']).toBe(API_KEY);
    expect(received.body).toEqual({ contents: [{ role: 'user', parts: [{ text: 'How many r are in strawberry?' }] }] });
  });

  it('leaves the usage chunk out for a client that did not ask for it', async () => {
    const stream = await client.chat.completions.create({ model: 'gemini-flash', messages: [{ role: 'user', content: 'Hi' }], stream: true });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.every((chunk) => chunk.choices.length === 1 && chunk.usage === undefined)).toBe(true);
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('stop');
  });

  it('returns a function call as tool_calls, and sends the tool result back as a functionResponse', async () => {
    const first = await client.chat.completions.create({
      model: 'gemini-flash',
      messages: [{ role: 'user', content: 'Weather in San Francisco?' }],
      tools: [WEATHER_TOOL],
      tool_choice: 'required',
    });
    expect(conformanceErrors('CreateChatCompletionResponse', first)).toEqual([]);
    const choice = first.choices[0];
    expect(choice?.finish_reason).toBe('tool_calls');
    expect(choice?.message.content).toBeNull();
    const call = choice?.message.tool_calls?.[0] as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
    expect(call).toMatchObject({
      id: expect.stringMatching(/^call_/),
      type: 'function',
      function: { name: 'weather', arguments: '{"location":"San Francisco"}' },
    });
    expect(onlyRequest().body).toMatchObject({
      tools: [
        { functionDeclarations: [{ name: 'weather', description: 'The weather in a location', parametersJsonSchema: WEATHER_TOOL.function.parameters }] },
      ],
      toolConfig: { functionCallingConfig: { mode: 'ANY' } },
    });

    upstream.requests.length = 0;
    await client.chat.completions.create({
      model: 'gemini-flash',
      messages: [
        { role: 'user', content: 'Weather in San Francisco?' },
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: call.id, content: '{"forecast":"fog"}' },
      ],
      tools: [WEATHER_TOOL],
      tool_choice: 'none',
    });
    expect(onlyRequest().body).toMatchObject({
      contents: [
        { role: 'user', parts: [{ text: 'Weather in San Francisco?' }] },
        {
          role: 'model',
          parts: [{ functionCall: { name: 'weather', args: { location: 'San Francisco' } }, thoughtSignature: 'skip_thought_signature_validator' }],
        },
        { role: 'user', parts: [{ functionResponse: { name: 'weather', response: { forecast: 'fog' } } }] },
      ],
      toolConfig: { functionCallingConfig: { mode: 'NONE' } },
    });
  });

  it('streams a function call as a tool-call delta finished by tool_calls', async () => {
    const stream = await client.chat.completions.create({
      model: 'gemini-flash',
      messages: [{ role: 'user', content: 'Weather in San Francisco?' }],
      tools: [WEATHER_TOOL],
      stream: true,
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const toolCalls = chunks.flatMap((chunk) => chunk.choices.flatMap((choice) => choice.delta.tool_calls ?? []));
    expect(toolCalls).toEqual([
      { index: 0, id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'weather', arguments: '{"location":"San Francisco"}' } },
    ]);
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('tool_calls');
  });
});

describe('embeddings through the Gemini adapter', () => {
  it('returns float vectors at their inputs indexes, counting usage itself', async () => {
    const inputs = ['first input', 'b', 'a third, longer input'];
    const raw = await client.embeddings.create({ model: 'gemini-embedding', input: inputs, encoding_format: 'float' }).asResponse();
    const body = (await raw.json()) as {
      data: Array<{ index: number; embedding: number[] }>;
      model: string;
      usage: { prompt_tokens: number; total_tokens: number };
    };
    expect(conformanceErrors('CreateEmbeddingResponse', body)).toEqual([]);
    expect(body.model).toBe('gemini-embedding');
    expect(body.data.map((item) => item.index)).toEqual([0, 1, 2]);
    body.data.forEach((item, index) => expect(item.embedding).toEqual(fakeGeminiEmbedding(inputs[index] as string)));
    // Gemini reports no usage for these models; the gateway counts the tokens.
    expect(body.usage.prompt_tokens).toBeGreaterThan(0);

    const received = onlyRequest();
    expect(received.path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');
    expect(received.headers['x-goog-api-key']).toBe(API_KEY);
    expect(received.body).toEqual({ requests: inputs.map((text) => ({ model: 'models/gemini-embedding-001', content: { parts: [{ text }] } })) });
  });

  it('serves the SDK default (base64 on the wire) and passes dimensions as outputDimensionality', async () => {
    const result = await client.embeddings.create({ model: 'gemini-embedding', input: ['hello world', 'xyz'], dimensions: 4 });
    expect(result.data.map((item) => item.index)).toEqual([0, 1]);
    result.data.forEach((item, index) => {
      const expected = fakeGeminiEmbedding(index === 0 ? 'hello world' : 'xyz', 4);
      expect(item.embedding).toHaveLength(4);
      item.embedding.forEach((value, position) => expect(value).toBeCloseTo(expected[position] as number, 6));
    });
    expect(onlyRequest().body).toMatchObject({ requests: [{ outputDimensionality: 4 }, { outputDimensionality: 4 }] });
  });

  it('splits inputs over the configured batch size and puts the vectors back in order', async () => {
    const inputs = ['a', 'bb', 'ccc', 'dddd', 'eeeee'];
    const result = await client.embeddings.create({ model: 'gemini-embedding-batched', input: inputs, encoding_format: 'float' });
    expect(upstream.requests).toHaveLength(3);
    expect(result.data.map((item) => item.index)).toEqual([0, 1, 2, 3, 4]);
    result.data.forEach((item, index) => expect(item.embedding).toEqual(fakeGeminiEmbedding(inputs[index] as string)));
  });

  it('refuses token-array inputs, which Gemini cannot embed', async () => {
    const response = await fetch(`${running.gateway.url}/v1/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gemini-embedding', input: [[1, 2, 3]] }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('upstream_bad_request');
    expect(upstream.requests).toHaveLength(0);
  });
});

describe('Gemini errors as the client sees them', () => {
  const hi = [{ role: 'user' as const, content: 'Hi' }];

  it('429 RESOURCE_EXHAUSTED → 429 with Retry-After from RetryInfo', async () => {
    upstream.failNext({ status: 429 });
    const error = (await client.chat.completions.create({ model: 'gemini-flash', messages: hi }).catch((caught: unknown) => caught)) as InstanceType<
      typeof OpenAI.RateLimitError
    >;
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(error.headers.get('retry-after')).toBe('35');
    expect(error.code).toBe('upstream_rate_limited');
  });

  it('400 API_KEY_INVALID and 403 PERMISSION_DENIED → 502 upstream_auth_failed', async () => {
    const invalidKey = readFileSync(new URL('../fixtures/gemini/errors/400-api-key-invalid.json', import.meta.url), 'utf8');
    upstream.failNext({ status: 400, body: JSON.parse(invalidKey) });
    const refused = (await client.chat.completions.create({ model: 'gemini-flash', messages: hi }).catch((caught: unknown) => caught)) as InstanceType<
      typeof OpenAI.APIError
    >;
    expect(refused.status).toBe(502);
    expect(refused.code).toBe('upstream_auth_failed');
    expect(refused.message).not.toContain(API_KEY);

    // The refused credential is out of service until an operator resets it.
    resetCredentials(running.gateway);
    upstream.failNext({ status: 403 });
    const forbidden = (await client.embeddings.create({ model: 'gemini-embedding', input: 'x' }).catch((caught: unknown) => caught)) as InstanceType<
      typeof OpenAI.APIError
    >;
    expect(forbidden.status).toBe(502);
    expect(forbidden.code).toBe('upstream_auth_failed');
  });

  it('400 INVALID_ARGUMENT → 400 upstream_bad_request with Google’s message', async () => {
    upstream.failNext({ status: 400 });
    const error = (await client.chat.completions
      .create({ model: 'gemini-flash', messages: hi, presence_penalty: 1 })
      .catch((caught: unknown) => caught)) as InstanceType<typeof OpenAI.BadRequestError>;
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.code).toBe('upstream_bad_request');
    expect(error.message).toContain('Penalty is not enabled for models/gemini-2.5-flash');
    expect(onlyRequest().body).toMatchObject({ generationConfig: { presencePenalty: 1 } });
  });

  it('503 UNAVAILABLE before the stream starts → 502, and an error event mid-stream ends the stream with an error', async () => {
    upstream.failNext({ status: 503 });
    const refused = await client.chat.completions.create({ model: 'gemini-flash', messages: hi, stream: true }).catch((caught: unknown) => caught);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(502);

    // The 503 cooled the pool's only credential for a second: an operator's reset ends it.
    resetCredentials(running.gateway);
    upstream.options = {
      midStreamError: { afterEvents: 1, error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } },
    };
    const stream = await client.chat.completions.create({ model: 'gemini-flash', messages: hi, stream: true });
    const received: string[] = [];
    const failure = await (async () => {
      for await (const chunk of stream) received.push(chunk.choices[0]?.delta.content ?? '');
    })().catch((caught: unknown) => caught);
    expect(received.join('')).toBe('There are **3**');
    expect(failure).toBeInstanceOf(Error);
  });
});
