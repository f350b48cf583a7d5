import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText, type ModelMessage } from 'ai';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { responsesSchemaErrors, streamEventSchemaErrors } from '../../src/protocols/openai-responses/openai-responses-schema-contract.js';
import type { RequestLogEntry } from '../../src/store/index.js';
import { startFakeAnthropicUpstream, type FakeAnthropicUpstream } from '../fake-upstreams/anthropic-upstream.js';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../fake-upstreams/openai-upstream.js';
import { resetCredentials } from '../support/reset-credentials.js';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';

const ANTHROPIC_KEY = 'sk-ant-api03-test-key';
const CLAUDE = 'claude-sonnet-4-20250514';
const OPENAI_UPSTREAM_MODEL = 'gpt-4o-mini-2024-07-18';
const RECORDED_RESPONSE = readFileSync(new URL('../fixtures/openai/responses.json', import.meta.url));
const RECORDED_RESPONSE_STREAM = readFileSync(new URL('../fixtures/chatgpt/stream-text.sse', import.meta.url));
/** What callers get: the upstream's bytes with its model name swapped for the public id (docs/model-names.md). */
const withPublicModel = (recorded: Buffer): Buffer =>
  Buffer.from(recorded.toString('utf8').replaceAll(new RegExp(`("model":\\s*)"${OPENAI_UPSTREAM_MODEL}"`, 'g'), '$1"gpt-4o-mini"'));
const RECORDED_CLAUDE_TEXT = (
  JSON.parse(readFileSync(new URL('../fixtures/anthropic/message.json', import.meta.url), 'utf8')) as { content: Array<{ text: string }> }
).content[0]?.text as string;

let openaiUpstream: FakeOpenAIUpstream;
let anthropicUpstream: FakeAnthropicUpstream;
let running: TestGateway;
let client: OpenAI;
/** A token of another team, which must not see this team's stored responses. */
let otherTeamToken: string;

beforeAll(async () => {
  openaiUpstream = await startFakeOpenAIUpstream();
  anthropicUpstream = await startFakeAnthropicUpstream({ apiKey: ANTHROPIC_KEY });
  running = await startTestGateway({
    request_log: { flush_interval_ms: 20 },
    upstreams: [
      { id: 'openai', provider: 'openai', base_url: openaiUpstream.url, api_key: 'sk-upstream-openai' },
      { id: 'claude', provider: 'anthropic', base_url: anthropicUpstream.url, api_key: ANTHROPIC_KEY },
    ],
    models: [
      { id: 'gpt-4o-mini', type: 'chat', routes: [{ upstream: 'openai', model: OPENAI_UPSTREAM_MODEL }] },
      { id: 'claude-sonnet', type: 'chat', routes: [{ upstream: 'claude', model: CLAUDE }] },
    ],
  });
  client = running.client;
  otherTeamToken = (await running.gateway.tokens.create({ team: 'other' })).secret;
});

afterAll(async () => {
  await running?.close();
  await openaiUpstream?.close();
  await anthropicUpstream?.close();
});

beforeEach(() => {
  resetCredentials(running.gateway);
  openaiUpstream.options = {};
  openaiUpstream.requests.length = 0;
  anthropicUpstream.options = {};
  anthropicUpstream.requests.length = 0;
});

async function logRow(requestId: string | null): Promise<RequestLogEntry> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const [row] = requestId === null ? [] : await running.gateway.stores.requestLogs.query({ requestId, limit: 1 });
    if (row !== undefined) return row;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no request log row for ${String(requestId)}`);
}

/** A raw call, to see the bytes and headers the SDKs hide. */
function post(body: unknown, token = running.token): Promise<Response> {
  return fetch(`${running.gateway.url}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** The Vercel AI SDK's default provider (the Responses API), pointed at the gateway, keeping each body it sends. */
function aiSdk(): { openai: ReturnType<typeof createOpenAI>; sent: Array<Record<string, unknown>> } {
  const sent: Array<Record<string, unknown>> = [];
  const recording = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    if (typeof init?.body === 'string') sent.push(JSON.parse(init.body) as Record<string, unknown>);
    return fetch(input, init);
  };
  return { openai: createOpenAI({ baseURL: `${running.gateway.url}/v1`, apiKey: running.token, fetch: recording as typeof fetch }), sent };
}

function lastOpenAIBody(): Record<string, unknown> {
  const request = openaiUpstream.requests.at(-1);
  if (request === undefined) throw new Error('the fake OpenAI upstream received nothing');
  expect(request.path).toBe('/v1/responses');
  expect(request.headers['authorization']).toBe('Bearer sk-upstream-openai');
  return request.body as Record<string, unknown>;
}

function lastAnthropicBody(): Record<string, unknown> {
  const request = anthropicUpstream.requests.at(-1);
  if (request === undefined) throw new Error('the fake Anthropic upstream received nothing');
  expect(request.path).toBe('/v1/messages');
  return request.body as Record<string, unknown>;
}

/** Reads a raw event stream into its events (`event:` name and parsed data). */
function parseEvents(text: string): Array<{ event: string; data: Record<string, unknown> }> {
  return text
    .split(/\r?\n\r?\n/)
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split(/\r?\n/);
      const event = lines.find((line) => line.startsWith('event: '))?.slice('event: '.length) ?? 'message';
      const data = lines
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice('data: '.length))
        .join('\n');
      return { event, data: JSON.parse(data) as Record<string, unknown> };
    });
}

describe('passed through to an upstream that speaks the Responses API (openai)', () => {
  it('client.responses.create: the upstream gets the body with only the model changed, the client its bytes with only the model changed, usage is logged', async () => {
    const sent = {
      model: 'gpt-4o-mini',
      instructions: 'Answer OK.',
      input: 'Say OK',
      temperature: 0.5,
      max_output_tokens: 16,
      metadata: { purpose: 'eval' },
      tools: [{ type: 'web_search' }],
    };
    const { data, response } = await client.responses.create(sent as OpenAI.Responses.ResponseCreateParamsNonStreaming).withResponse();
    expect(data.output_text).toBe('OK');
    expect(data.id).toBe('resp_sanitized_normal');
    expect(lastOpenAIBody()).toEqual({ ...sent, model: OPENAI_UPSTREAM_MODEL });

    const raw = await post(sent);
    expect(Buffer.from(await raw.arrayBuffer()).toString()).toBe(withPublicModel(RECORDED_RESPONSE).toString());

    expect(await logRow(response.headers.get('x-request-id'))).toMatchObject({
      endpoint: 'responses',
      model: 'gpt-4o-mini',
      upstream: 'openai',
      status: 200,
      promptTokens: 12,
      completionTokens: 2,
      usageSource: 'upstream',
    });
  });

  it('stream: true relays the upstream events byte for byte but for the model, and logs the usage of response.completed', async () => {
    const stream = await client.responses.create({ model: 'gpt-4o-mini', input: 'Say OK', stream: true });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(lastOpenAIBody()).toEqual({ model: OPENAI_UPSTREAM_MODEL, input: 'Say OK', stream: true });

    const raw = await post({ model: 'gpt-4o-mini', input: 'Say OK', stream: true });
    expect(raw.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(Buffer.from(await raw.arrayBuffer()).toString()).toBe(withPublicModel(RECORDED_RESPONSE_STREAM).toString());
    expect(await logRow(raw.headers.get('x-request-id'))).toMatchObject({
      endpoint: 'responses',
      promptTokens: 12,
      completionTokens: 2,
      usageSource: 'upstream',
    });
  });

  it('client.responses.stream() assembles the final response', async () => {
    const stream = client.responses.stream({ model: 'gpt-4o-mini', input: 'Say OK' });
    const deltas: string[] = [];
    stream.on('response.output_text.delta', (event) => deltas.push(event.delta));
    const final = await stream.finalResponse();
    expect(final.output_text).toBe('OK');
    expect(deltas).toEqual(['OK']);
    expect(final.usage?.total_tokens).toBe(14);
  });

  it("the AI SDK's openai(model): generateText and streamText, each body passed on with only the model changed", async () => {
    const { openai, sent } = aiSdk();
    const generated = await generateText({ model: openai('gpt-4o-mini'), system: 'Answer OK.', prompt: 'Say OK', maxRetries: 0 });
    expect(generated.text).toBe('OK');
    expect(generated.usage).toMatchObject({ inputTokens: 12, outputTokens: 2, totalTokens: 14 });
    expect(lastOpenAIBody()).toEqual({ ...sent[0], model: OPENAI_UPSTREAM_MODEL });

    const streamed = streamText({ model: openai('gpt-4o-mini'), prompt: 'Say OK', maxRetries: 0 });
    let text = '';
    for await (const delta of streamed.textStream) text += delta;
    expect(text).toBe('OK');
    expect(await streamed.usage).toMatchObject({ inputTokens: 12, outputTokens: 2 });
    expect(sent[1]?.['stream']).toBe(true);
    expect(lastOpenAIBody()).toEqual({ ...sent[1], model: OPENAI_UPSTREAM_MODEL });
    const [row] = await running.gateway.stores.requestLogs.query({ limit: 1 });
    expect(row).toMatchObject({ endpoint: 'responses', promptTokens: 12, completionTokens: 2 });
  });

  it('passes an unknown previous_response_id and item references on untouched, and keeps the continuation in the session of the response it names', async () => {
    const first = await client.responses.create({ model: 'gpt-4o-mini', input: 'Say OK' }).withResponse();
    expect(first.response.headers.get('x-session-source')).toBe('inferred');
    const second = await client.responses
      .create({
        model: 'gpt-4o-mini',
        previous_response_id: first.data.id,
        input: [
          { type: 'item_reference', id: 'msg_upstream_own' },
          { role: 'user', content: 'Again' },
        ],
      })
      .withResponse();
    expect(lastOpenAIBody()).toEqual({
      model: OPENAI_UPSTREAM_MODEL,
      previous_response_id: 'resp_sanitized_normal',
      input: [
        { type: 'item_reference', id: 'msg_upstream_own' },
        { role: 'user', content: 'Again' },
      ],
    });
    // The upstream keeps that response; its continuation goes to the credential that made it.
    expect(second.response.headers.get('x-session-source')).toBe('previous_response_id');
    expect(second.response.headers.get('x-session-id')).toBe(first.response.headers.get('x-session-id'));
  });

  it('sends the whole conversation instead of a previous_response_id the gateway itself stored (made by conversion)', async () => {
    const converted = await client.responses.create({ model: 'claude-sonnet', instructions: 'Be brief.', input: 'how many angels' });
    await client.responses.create({ model: 'gpt-4o-mini', previous_response_id: converted.id, input: 'And devils?' });
    const body = lastOpenAIBody();
    expect(body).not.toHaveProperty('previous_response_id');
    expect(body['input']).toEqual([
      { type: 'message', role: 'user', content: 'how many angels' },
      {
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: RECORDED_CLAUDE_TEXT, annotations: [], logprobs: [] }],
      },
      { type: 'message', role: 'user', content: 'And devils?' },
    ]);
  });

  it('a stream the upstream cuts after its first events ends with an in-band error the SDK raises', async () => {
    openaiUpstream.options = { resetAfterEvents: 3 };
    const { data: stream, response } = await client.responses.create({ model: 'gpt-4o-mini', input: 'Say OK', stream: true }).withResponse();
    const types: string[] = [];
    const failure = await (async () => {
      for await (const event of stream) types.push(event.type);
    })().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect((failure as InstanceType<typeof OpenAI.APIError>).message).toMatch(/upstream provider failed or could not be reached/);
    expect(types).toEqual(['response.created', 'response.in_progress', 'response.output_item.added']);
    expect(await logRow(response.headers.get('x-request-id'))).toMatchObject({ errorCode: 'upstream_error' });
  });
});

describe('converted to chat completions for every other upstream (anthropic)', () => {
  it('client.responses.create: a Response in the published schema, Anthropic sent a converted request, usage logged', async () => {
    const { data, response } = await client.responses
      .create({
        model: 'claude-sonnet',
        instructions: 'You are a medieval historian.',
        input: 'how many angels can dance on the head of a pin',
        max_output_tokens: 300,
        temperature: 0.5,
      })
      .withResponse();
    expect(data.output_text).toBe(RECORDED_CLAUDE_TEXT);
    expect(data).toMatchObject({
      object: 'response',
      status: 'completed',
      model: 'claude-sonnet',
      store: true,
      usage: { input_tokens: 18, output_tokens: 254, total_tokens: 272 },
    });
    expect(data.id).toMatch(/^resp_[0-9a-f]{48}$/);
    expect(lastAnthropicBody()).toMatchObject({
      model: CLAUDE,
      system: 'You are a medieval historian.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'how many angels can dance on the head of a pin' }] }],
      max_tokens: 300,
      temperature: 0.5,
    });
    expect(await logRow(response.headers.get('x-request-id'))).toMatchObject({
      endpoint: 'responses',
      model: 'claude-sonnet',
      upstream: 'claude',
      status: 200,
      promptTokens: 18,
      completionTokens: 254,
      usageSource: 'upstream',
    });

    const raw = await post({ model: 'claude-sonnet', input: 'Hi' });
    expect(responsesSchemaErrors('Response', await raw.json())).toEqual([]);
  });

  it('stream: true sends the published event sequence, each event valid, and logs the usage', async () => {
    const raw = await post({ model: 'claude-sonnet', input: 'Hi', stream: true });
    expect(raw.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const text = await raw.text();
    expect(text).not.toContain('[DONE]');
    const events = parseEvents(text);
    for (const { event, data } of events) {
      expect(data['type']).toBe(event);
      expect(streamEventSchemaErrors(data)).toEqual([]);
    }
    expect(events.map((event) => event.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((event) => event.data['sequence_number'])).toEqual(events.map((_event, index) => index));
    expect(await logRow(raw.headers.get('x-request-id'))).toMatchObject({
      endpoint: 'responses',
      promptTokens: 11,
      completionTokens: 6,
      usageSource: 'upstream',
    });
    expect(lastAnthropicBody()).toMatchObject({ stream: true });
  });

  it('client.responses.create({stream: true}) and client.responses.stream() read the converted events', async () => {
    const stream = await client.responses.create({ model: 'claude-sonnet', input: 'Hi', stream: true });
    let text = '';
    for await (const event of stream) if (event.type === 'response.output_text.delta') text += event.delta;
    expect(text).toBe('Hello there!');

    const final = await client.responses.stream({ model: 'claude-sonnet', input: 'Hi' }).finalResponse();
    expect(final.output_text).toBe('Hello there!');
    expect(final.usage).toMatchObject({ input_tokens: 11, output_tokens: 6 });
  });

  it("the AI SDK's openai(model): generateText and streamText", async () => {
    const { openai } = aiSdk();
    const generated = await generateText({ model: openai('claude-sonnet'), system: 'Be brief.', prompt: 'how many angels', maxRetries: 0 });
    expect(generated.text).toBe(RECORDED_CLAUDE_TEXT);
    expect(generated.usage).toMatchObject({ inputTokens: 18, outputTokens: 254 });
    expect(lastAnthropicBody()).toMatchObject({ system: 'Be brief.', messages: [{ role: 'user', content: [{ type: 'text', text: 'how many angels' }] }] });

    const errors: unknown[] = [];
    const streamed = streamText({ model: openai('claude-sonnet'), prompt: 'Hi', maxRetries: 0, onError: ({ error }) => void errors.push(error) });
    let text = '';
    for await (const delta of streamed.textStream) text += delta;
    expect(errors).toEqual([]);
    expect(text).toBe('Hello there!');
    expect(await streamed.usage).toMatchObject({ inputTokens: 11, outputTokens: 6 });
    expect(await streamed.finishReason).toBe('stop');
  });

  it('an upstream failure after the first event ends the stream with error and response.failed', async () => {
    anthropicUpstream.options = { streamFixture: 'stream-error.sse' };
    const raw = await post({ model: 'claude-sonnet', input: 'Hi', stream: true });
    const events = parseEvents(await raw.text());
    expect(events.slice(-2).map((event) => event.event)).toEqual(['error', 'response.failed']);
    for (const { data } of events) expect(streamEventSchemaErrors(data)).toEqual([]);
    // What failed upstream is for the operator's log; the caller is told what happened and the request id.
    expect(events.at(-2)?.data['message']).toMatch(/upstream provider failed or could not be reached.*request id /);
    expect(await logRow(raw.headers.get('x-request-id'))).toMatchObject({ status: 200, errorCode: 'upstream_error' });
  });
});

describe('conversations on the converted path: stored responses', () => {
  it('previous_response_id continues a stored conversation: Anthropic gets the first turn, the turn stays in its session', async () => {
    const first = await client.responses.create({ model: 'claude-sonnet', instructions: 'Be brief.', input: 'how many angels' }).withResponse();
    const second = await client.responses
      .create({ model: 'claude-sonnet', instructions: 'Be briefer.', previous_response_id: first.data.id, input: 'And devils?' })
      .withResponse();
    expect(second.data.previous_response_id).toBe(first.data.id);
    expect(lastAnthropicBody()).toMatchObject({
      // Instructions are not carried over: only the request's own apply, as OpenAI does.
      system: 'Be briefer.',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'how many angels' }] },
        { role: 'assistant', content: [{ type: 'text', text: RECORDED_CLAUDE_TEXT }] },
        { role: 'user', content: [{ type: 'text', text: 'And devils?' }] },
      ],
    });
    expect(second.response.headers.get('x-session-source')).toBe('previous_response_id');
    expect(second.response.headers.get('x-session-id')).toBe(first.response.headers.get('x-session-id'));

    // A third turn, streamed, continues the second: the whole chain reaches the upstream.
    const third = await client.responses.create({ model: 'claude-sonnet', previous_response_id: second.data.id, input: 'And cherubs?', stream: true });
    let lastType = '';
    for await (const event of third) lastType = event.type;
    expect(lastType).toBe('response.completed');
    expect((lastAnthropicBody()['messages'] as unknown[]).length).toBe(5);
  });

  it("the AI SDK's item_reference to an earlier assistant turn resolves from the store", async () => {
    const { openai, sent } = aiSdk();
    const question: ModelMessage = { role: 'user', content: 'how many angels' };
    const first = await generateText({ model: openai('claude-sonnet'), messages: [question], maxRetries: 0 });
    const second = await generateText({
      model: openai('claude-sonnet'),
      messages: [question, ...first.response.messages, { role: 'user', content: 'And devils?' }],
      maxRetries: 0,
    });
    expect(second.text).toBe(RECORDED_CLAUDE_TEXT);
    const input = sent[1]?.['input'] as Array<Record<string, unknown>>;
    expect(sent[1]).not.toHaveProperty('store');
    expect(input[1]).toEqual({ type: 'item_reference', id: expect.stringMatching(/^msg_[0-9a-f]{48}$/) as unknown });
    expect(lastAnthropicBody()['messages']).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'how many angels' }] },
      { role: 'assistant', content: [{ type: 'text', text: RECORDED_CLAUDE_TEXT }] },
      { role: 'user', content: [{ type: 'text', text: 'And devils?' }] },
    ]);
  });

  it('store: false keeps nothing: a later previous_response_id is refused with 400 naming it', async () => {
    const unstored = await client.responses.create({ model: 'claude-sonnet', input: 'how many angels', store: false });
    expect(unstored).toMatchObject({ store: false });
    const error = await client.responses
      .create({ model: 'claude-sonnet', previous_response_id: unstored.id, input: 'And devils?' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error).toMatchObject({ status: 400, code: 'previous_response_not_found', param: 'previous_response_id' });
    expect((error as Error).message).toContain(unstored.id);
    expect(anthropicUpstream.requests).toHaveLength(1);
  });

  it('an unknown previous_response_id is refused with 400 naming it, before any upstream is called', async () => {
    const response = await post({ model: 'claude-sonnet', previous_response_id: 'resp_nobody_made_this', input: 'Hi' });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: Record<string, unknown> };
    expect(body.error).toMatchObject({ code: 'previous_response_not_found', param: 'previous_response_id' });
    expect(body.error['message']).toContain("'resp_nobody_made_this'");
    expect(anthropicUpstream.requests).toHaveLength(0);
  });

  it('an item_reference nobody stored is refused with 400 naming input[i]', async () => {
    const response = await post({
      model: 'claude-sonnet',
      input: [
        { role: 'user', content: 'Hi' },
        { type: 'item_reference', id: 'msg_unknown' },
      ],
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: Record<string, unknown> }).error).toMatchObject({ code: 'invalid_body', param: 'input[1]' });
  });

  it("another team cannot continue this team's response", async () => {
    const mine = await client.responses.create({ model: 'claude-sonnet', input: 'how many angels' });
    const response = await post({ model: 'claude-sonnet', previous_response_id: mine.id, input: 'And devils?' }, otherTeamToken);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: Record<string, unknown> }).error).toMatchObject({ param: 'previous_response_id' });
  });
});

describe('what is refused', () => {
  it('background: true is 400 naming it, on either path', async () => {
    for (const model of ['claude-sonnet', 'gpt-4o-mini']) {
      const response = await post({ model, input: 'Hi', background: true });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: Record<string, unknown> }).error).toMatchObject({ code: 'invalid_body', param: 'background' });
    }
    expect(openaiUpstream.requests).toHaveLength(0);
    expect(anthropicUpstream.requests).toHaveLength(0);
  });

  it('what conversion cannot do is 400 naming the field; a hosted tool nothing forces is left out; the passthrough leaves both to the upstream', async () => {
    const forced = await post({ model: 'claude-sonnet', input: 'Hi', tools: [{ type: 'web_search' }], tool_choice: { type: 'web_search_preview' } });
    expect(forced.status).toBe(400);
    expect(((await forced.json()) as { error: Record<string, unknown> }).error).toMatchObject({ code: 'invalid_body', param: 'tool_choice' });
    const unknown = await post({ model: 'claude-sonnet', input: 'Hi', tools: [{ type: 'made_up_tool' }] });
    expect(((await unknown.json()) as { error: Record<string, unknown> }).error).toMatchObject({ code: 'invalid_body', param: 'tools[0].type' });
    expect(anthropicUpstream.requests).toHaveLength(0);
    const answered = await post({ model: 'claude-sonnet', input: 'Hi', tools: [{ type: 'web_search' }] });
    expect(answered.status).toBe(200);
    expect(lastAnthropicBody()).not.toHaveProperty('tools');
  });

  it('validates like chat: 422 naming the field, 400 for a body that is not JSON, 404 for an unknown model', async () => {
    const invalid = await post({ model: 'claude-sonnet', input: 'Hi', temperature: 3 });
    expect(invalid.status).toBe(422);
    expect(((await invalid.json()) as { error: Record<string, unknown> }).error).toMatchObject({ code: 'validation_error', param: 'temperature' });
    const tokens = await post({ model: 'claude-sonnet', input: 'Hi', max_output_tokens: 0 });
    expect(((await tokens.json()) as { error: Record<string, unknown> }).error).toMatchObject({ param: 'max_output_tokens' });
    const input = await post({ model: 'claude-sonnet', input: 42 });
    expect(((await input.json()) as { error: Record<string, unknown> }).error).toMatchObject({ code: 'validation_error', param: 'input' });
    const notJson = await post('{"model":');
    expect(notJson.status).toBe(400);
    const unknown = await post({ model: 'gpt-9', input: 'Hi' });
    expect(unknown.status).toBe(404);
    expect(openaiUpstream.requests).toHaveLength(0);
    expect(anthropicUpstream.requests).toHaveLength(0);
  });
});

const REDIS_URL = process.env.TEST_REDIS_URL;

describe.skipIf(!REDIS_URL)('stored responses in a shared Redis (state.url)', () => {
  const url = REDIS_URL ?? '';
  const keyPrefix = `switchyard-test:${randomBytes(6).toString('hex')}:`;
  let first: TestGateway;
  let second: TestGateway;

  function document(): { upstreams: unknown[]; models: unknown[] } & Record<string, unknown> {
    return {
      state: { url, key_prefix: keyPrefix },
      responses: { retention: '2h' },
      upstreams: [{ id: 'claude', provider: 'anthropic', base_url: anthropicUpstream.url, api_key: ANTHROPIC_KEY }],
      models: [{ id: 'claude-sonnet', type: 'chat', routes: [{ upstream: 'claude', model: CLAUDE }] }],
    };
  }

  beforeAll(async () => {
    first = await startTestGateway(document());
    // A replica: the same Redis and the same database (one token works on both).
    second = await startTestGateway({ ...document(), database: { url: `sqlite:${first.directory}/switchyard.db` } });
  });

  afterAll(async () => {
    await second?.close();
    await first?.close();
    const admin = new Redis(url);
    const keys = await admin.keys(`${keyPrefix}*`);
    if (keys.length > 0) await admin.del(...keys);
    await admin.quit();
  });

  it('a response made by one gateway is continued through another, and kept for responses.retention', async () => {
    const made = await first.client.responses.create({ model: 'claude-sonnet', input: 'how many angels' });
    const replica = new OpenAI({ apiKey: first.token, baseURL: `${second.gateway.url}/v1`, maxRetries: 0 });
    const continued = await replica.responses.create({ model: 'claude-sonnet', previous_response_id: made.id, input: 'And devils?' });
    expect(continued.previous_response_id).toBe(made.id);
    expect((lastAnthropicBody()['messages'] as unknown[]).length).toBe(3);

    const admin = new Redis(url);
    const [key] = await admin.keys(`${keyPrefix}value:response:*${made.id}`);
    const ttl = await admin.pttl(key as string);
    await admin.quit();
    expect(ttl).toBeGreaterThan(2 * 3_600_000 - 60_000);
    expect(ttl).toBeLessThanOrEqual(2 * 3_600_000);
  });
});
