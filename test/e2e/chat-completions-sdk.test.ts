import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startOpenAIFakeGateway, type OpenAIFakeGateway } from '../support/start-openai-fake-gateway.js';
import { conformanceErrors } from '../support/openai-conformance.js';
import { resetCredentials } from '../support/reset-credentials.js';

const FIXTURE_TEXT = 'Hello! How can I assist you today?';

let harness: OpenAIFakeGateway;
let token: string;
let client: OpenAI;

beforeAll(async () => {
  harness = await startOpenAIFakeGateway();
  token = await harness.createToken({ team: 'search', project: 'ranker' });
  client = harness.clientFor(token);
});
afterAll(async () => {
  await harness.close();
});
beforeEach(() => {
  resetCredentials(harness.gateway);
  harness.upstream.options = {};
  harness.upstream.requests.length = 0;
  harness.backupUpstream.requests.length = 0;
});

describe('models', () => {
  it('lists the models the token may use, in the OpenAI list envelope', async () => {
    const page = await client.models.list();
    expect(page.data.map((model) => model.id)).toEqual([
      'gpt-4o-mini',
      'pooled-chat',
      'slow-chat',
      'unreachable-chat',
      'text-embedding-3-small',
      'batched-embed',
      'whisper-1',
      'tts-1',
      'rerank-small',
    ]);
    const raw = await client.models.list().asResponse();
    const body = (await raw.json()) as { object: string; data: Array<Record<string, unknown>> };
    expect(conformanceErrors('ListModelsResponse', body)).toEqual([]);
    expect(body.data[0]).toEqual({ id: 'gpt-4o-mini', object: 'model', created: 1_721_172_741, owned_by: 'openai', type: 'chat' });
    expect(body.data[1]).toMatchObject({ id: 'pooled-chat', owned_by: 'openai', type: 'chat' });
  });

  it('hides models outside the allow-list, and retrieves one', async () => {
    const restricted = harness.clientFor(await harness.createToken({ models: ['gpt-4o-mini'] }));
    expect((await restricted.models.list()).data.map((model) => model.id)).toEqual(['gpt-4o-mini']);
    expect(await restricted.models.retrieve('gpt-4o-mini')).toMatchObject({ id: 'gpt-4o-mini', object: 'model' });
    await expect(restricted.models.retrieve('pooled-chat')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });
});

describe('chat completions, not streamed', () => {
  it('answers with the upstream completion and its usage, and logs the request', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], temperature: 0.2 })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe(FIXTURE_TEXT);
    expect(data.usage).toMatchObject({ prompt_tokens: 8, completion_tokens: 9, total_tokens: 17 });
    expect(conformanceErrors('CreateChatCompletionResponse', data)).toEqual([]);

    const requestId = response.headers.get('x-request-id') as string;
    expect(requestId).toMatch(/^req_[0-9a-f]{32}$/);
    const row = await harness.logRow(requestId);
    expect(row).toMatchObject({
      endpoint: 'chat.completions',
      model: 'gpt-4o-mini',
      upstream: 'primary',
      team: 'search',
      project: 'ranker',
      status: 200,
      promptTokens: 8,
      completionTokens: 9,
      usageSource: 'upstream',
      errorCode: null,
    });
    expect(row.latencyMs).toBeGreaterThan(0);
    expect(row.ttfbMs).toBeGreaterThan(0);
  });

  it('sends the upstream its own model name and credential, and every OpenAI parameter unchanged', async () => {
    const parameters = {
      tool_choice: 'none' as const,
      tools: [{ type: 'function' as const, function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }],
      response_format: { type: 'json_object' as const },
      stop: ['\n\n'],
      n: 2,
      seed: 7,
      logprobs: true,
      top_logprobs: 2,
      user: 'user-42',
      max_tokens: 50,
      top_p: 0.9,
      frequency_penalty: 0.5,
      presence_penalty: -0.5,
      logit_bias: { '50256': -100 },
      parallel_tool_calls: false,
      metadata: { session_id: 'session-abc', sticky_key: 'sticky', purpose: 'eval' },
    };
    await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'developer', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
      ],
      ...parameters,
    });
    const [received] = harness.upstream.requests;
    expect(received?.path).toBe('/v1/chat/completions');
    expect(received?.headers['authorization']).toBe('Bearer sk-upstream-primary');
    const { metadata: _metadata, ...passedThrough } = parameters;
    expect(received?.body).toEqual({
      model: 'gpt-4o-mini-2024-07-18',
      messages: [
        { role: 'developer', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
      ],
      ...passedThrough,
      metadata: { purpose: 'eval' },
    });
  });

  it('drops metadata entirely when only the gateway keys were in it', async () => {
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], metadata: { sticky_key: 'k' } });
    expect(harness.upstream.requests[0]?.body).not.toHaveProperty('metadata');
  });

  it('counts usage with the tokenizer when the upstream reports none, and marks it estimated', async () => {
    harness.upstream.options = { omitUsage: true };
    const { data, response } = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello to the whole world, please.' }] })
      .withResponse();
    expect(data.usage).toBeUndefined();
    const row = await harness.logRow(response.headers.get('x-request-id') as string);
    expect(row.usageSource).toBe('estimated');
    // "Say hello to the whole world, please." is 9 tokens in o200k_base, plus 3 framing, 1 for "user", 3 priming.
    expect(row.promptTokens).toBe(16);
    // "Hello! How can I assist you today?" is 9 tokens.
    expect(row.completionTokens).toBe(9);
  });
});

describe('chat completions, streamed', () => {
  it('relays the chunks and ends the stream, without a usage chunk the client did not ask for', async () => {
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], stream: true });
    let text = '';
    const chunks = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
      text += chunk.choices[0]?.delta.content ?? '';
    }
    expect(text).toBe(FIXTURE_TEXT);
    expect(chunks.every((chunk) => chunk.choices.length > 0)).toBe(true);
    for (const chunk of chunks) expect(conformanceErrors('CreateChatCompletionStreamResponse', chunk)).toEqual([]);
    // The gateway asked for usage on its own behalf, and recorded it.
    expect(harness.upstream.requests[0]?.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('passes the usage chunk to a client that asked for it, and logs that usage', async () => {
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } })
      .withResponse();
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    const last = chunks.at(-1);
    expect(last?.choices).toEqual([]);
    expect(last?.usage).toMatchObject({ prompt_tokens: 8, completion_tokens: 9, total_tokens: 17 });
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const row = await harness.logRow(response.headers.get('x-request-id') as string);
    expect(row).toMatchObject({ status: 200, promptTokens: 8, completionTokens: 9, usageSource: 'upstream', upstream: 'primary' });
  });

  it('keeps multi-byte text intact across odd byte splits and CRLF line ends', async () => {
    const completionText = 'héllo wörld — 你好 🚀 done';
    harness.upstream.options = { lineEnding: 'crlf', completionText };
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe(completionText);
  });

  it('estimates streamed usage from the relayed text when the upstream sends none', async () => {
    harness.upstream.options = { omitUsage: true };
    const { data: stream, response } = await client.chat.completions
      .create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'Say hello to the whole world, please.' }],
        stream: true,
        stream_options: { include_usage: true },
      })
      .withResponse();
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.some((chunk) => chunk.usage)).toBe(false);
    const row = await harness.logRow(response.headers.get('x-request-id') as string);
    expect(row).toMatchObject({ usageSource: 'estimated', promptTokens: 16, completionTokens: 9 });
  });

  it('relays each chunk as it arrives instead of buffering the answer', async () => {
    harness.upstream.options = { chunkDelayMs: 150, splitBytes: false };
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], stream: true });
    const arrivals: number[] = [];
    for await (const _chunk of stream) arrivals.push(performance.now());
    // Had the gateway buffered, every chunk would arrive in the same instant.
    expect(arrivals.length).toBeGreaterThan(5);
    expect((arrivals.at(-1) as number) - (arrivals[0] as number)).toBeGreaterThan(150 * (arrivals.length - 2));
  });

  it('reports an upstream failure after the first chunk in-band, which the SDK raises', async () => {
    harness.upstream.options = { resetAfterEvents: 3 };
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], stream: true });
    const seen: string[] = [];
    const consume = async () => {
      for await (const chunk of stream) seen.push(chunk.choices[0]?.delta.content ?? '');
    };
    await expect(consume()).rejects.toBeInstanceOf(OpenAI.APIError);
    expect(seen.length).toBe(3);
  });
});

describe('sessions and request ids', () => {
  it('echoes a valid X-Request-Id and replaces an unsafe one', async () => {
    const echoed = await client.models.list({ headers: { 'X-Request-Id': 'trace-123.abc' } }).asResponse();
    expect(echoed.headers.get('x-request-id')).toBe('trace-123.abc');
    const replaced = await client.models.list({ headers: { 'X-Request-Id': 'bad id with spaces' } }).asResponse();
    expect(replaced.headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('logs every request when a caller repeats its X-Request-Id, under ids of the gateway own', async () => {
    const send = () =>
      client.chat.completions
        .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }, { headers: { 'X-Request-Id': 'retry-7' } })
        .withResponse();
    const first = await send();
    const second = await send();
    expect(first.response.headers.get('x-request-id')).toBe('retry-7');
    expect(second.response.headers.get('x-request-id')).toBe('retry-7');
    const rows = async () => harness.gateway.stores.requestLogs.query({ requestId: 'retry-7' });
    for (let attempt = 0; attempt < 100 && (await rows()).length < 2; attempt++) await new Promise((resolve) => setTimeout(resolve, 20));
    const logged = await rows();
    expect(logged).toHaveLength(2);
    expect(logged.every((row) => row.clientRequestId === 'retry-7' && row.id.startsWith('req_'))).toBe(true);
    expect(new Set(logged.map((row) => row.id)).size).toBe(2);
    // A later request is still logged: the repeated id did not wedge the request log queue.
    const later = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
    expect((await harness.logRow(later.response.headers.get('x-request-id'))).clientRequestId).toBeNull();
  });

  it('takes the session id by precedence: header, then metadata.session_id, then metadata.sticky_key', async () => {
    const cases: Array<{ headers: Record<string, string>; metadata: Record<string, string>; id: string; source: string }> = [
      { headers: { 'X-Session-Id': 'from-header' }, metadata: { session_id: 'from-metadata', sticky_key: 'from-sticky' }, id: 'from-header', source: 'header' },
      { headers: {}, metadata: { session_id: 'from-metadata', sticky_key: 'from-sticky' }, id: 'from-metadata', source: 'metadata.session_id' },
      { headers: {}, metadata: { sticky_key: 'from-sticky' }, id: 'from-sticky', source: 'metadata.sticky_key' },
    ];
    for (const { headers, metadata, id, source } of cases) {
      const { response } = await client.chat.completions
        .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], metadata }, { headers })
        .withResponse();
      expect(response.headers.get('x-session-id')).toBe(id);
      expect(response.headers.get('x-session-source')).toBe(source);
      expect(response.headers.get('x-session-affinity')).toMatch(/^(new|kept)$/);
      expect(await harness.logRow(response.headers.get('x-request-id') as string)).toMatchObject({ sessionId: id, sessionSource: source });
    }
    // None of them: an id inferred from the conversation, the same for each of its turns.
    const turns = [
      [
        { role: 'system' as const, content: 'Be brief.' },
        { role: 'user' as const, content: 'Hi' },
      ],
      [
        { role: 'system' as const, content: 'Be brief.' },
        { role: 'user' as const, content: 'Hi' },
        { role: 'assistant' as const, content: 'Hello!' },
        { role: 'user' as const, content: 'And?' },
      ],
    ];
    const inferred: string[] = [];
    for (const messages of turns) {
      const { response } = await client.chat.completions.create({ model: 'gpt-4o-mini', messages }).withResponse();
      expect(response.headers.get('x-session-source')).toBe('inferred');
      inferred.push(response.headers.get('x-session-id') as string);
      const row = await harness.logRow(response.headers.get('x-request-id') as string);
      expect(row).toMatchObject({ sessionId: inferred.at(-1), sessionSource: 'inferred' });
    }
    expect(inferred[0]).toMatch(/^inf_[0-9a-f]{24}$/);
    expect(inferred[1]).toBe(inferred[0]);
    const other = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Another conversation' }] }).withResponse();
    expect(other.response.headers.get('x-session-id')).not.toBe(inferred[0]);
  });
});

describe('failover across a model pool', () => {
  it('moves to the next credential when the first fails before answering', async () => {
    harness.upstream.failNext({ status: 500 });
    const { data, response } = await client.chat.completions
      .create({ model: 'pooled-chat', messages: [{ role: 'user', content: 'Hi (a 500)' }] })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe(FIXTURE_TEXT);
    // Failover is invisible to the caller but for the session's move, which the headers tell.
    expect(response.headers.get('x-session-source')).toBe('inferred');
    expect(response.headers.get('x-session-affinity')).toBe('new');
    expect(harness.upstream.requests).toHaveLength(1);
    expect(harness.backupUpstream.requests).toHaveLength(1);
    expect(harness.backupUpstream.requests[0]?.headers['authorization']).toBe('Bearer sk-upstream-backup');
    expect((await harness.logRow(response.headers.get('x-request-id') as string)).upstream).toBe('backup');
  });

  it('moves a stream to the next credential when the first is rate limited', async () => {
    harness.upstream.failNext({ status: 429, headers: { 'retry-after': '3' } });
    const stream = await client.chat.completions.create({ model: 'pooled-chat', messages: [{ role: 'user', content: 'Hi (a 429)' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe(FIXTURE_TEXT);
    expect(harness.backupUpstream.requests).toHaveLength(1);
  });

  it('does not retry a request the upstream refused as invalid', async () => {
    harness.upstream.failNext({ status: 400 });
    const error = await client.chat.completions
      .create({ model: 'pooled-chat', messages: [{ role: 'user', content: 'Hi (a 400)' }] })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('upstream_bad_request');
    expect(harness.backupUpstream.requests).toHaveLength(0);
  });
});
