import { readFileSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  errorBodySchemaErrors,
  messageSchemaErrors,
  streamEventSchemaErrors,
} from '../../src/protocols/anthropic-messages/anthropic-messages-schema-contract.js';
import { startFakeAnthropicUpstream, type FakeAnthropicUpstream } from '../fake-upstreams/anthropic-upstream.js';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../fake-upstreams/openai-upstream.js';
import { resetCredentials } from '../support/reset-credentials.js';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';

const API_KEY = 'sk-ant-api03-test-key';
const UPSTREAM_MODEL = 'claude-sonnet-4-20250514';

let anthropic: FakeAnthropicUpstream;
let openai: FakeOpenAIUpstream;
let running: TestGateway;
let client: Anthropic;

beforeAll(async () => {
  anthropic = await startFakeAnthropicUpstream({ apiKey: API_KEY });
  openai = await startFakeOpenAIUpstream();
  running = await startTestGateway({
    upstreams: [
      { id: 'claude', provider: 'anthropic', base_url: anthropic.url, api_key: API_KEY },
      { id: 'gpt', provider: 'openai', base_url: openai.url, api_key: 'sk-test' },
    ],
    models: [
      {
        id: 'claude-sonnet',
        type: 'chat',
        aliases: ['claude-sonnet-5-5', 'claude-*'],
        routes: [{ upstream: 'claude', model: UPSTREAM_MODEL }],
        price: { input_per_mtok: 3, output_per_mtok: 15, cached_input_per_mtok: 0.3, cache_write_per_mtok: 3.75 },
      },
      { id: 'gpt-mini', type: 'chat', routes: [{ upstream: 'gpt', model: 'gpt-4o-mini' }] },
    ],
  });
  client = new Anthropic({ baseURL: running.gateway.url, apiKey: running.token, maxRetries: 0 });
});

afterAll(async () => {
  await running?.close();
  await anthropic?.close();
  await openai?.close();
});

beforeEach(() => {
  resetCredentials(running.gateway);
  anthropic.options = {};
  anthropic.clearFailures();
  anthropic.requests.length = 0;
  openai.requests.length = 0;
});

function fixture(name: string): string {
  return readFileSync(new URL(`../fixtures/anthropic/${name}`, import.meta.url), 'utf8');
}

describe('POST /v1/messages passed through to an Anthropic upstream', () => {
  it('sends the body as it came with only the model replaced, and answers with the message as it came, named by the public model', async () => {
    const sent =
      '{"model":"claude-sonnet","max_tokens":1024,"system":[{"type":"text","text":"Be brief.","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"how many angels can dance on the head of a pin"}],"thinking":{"type":"enabled","budget_tokens":512}}';
    const response = await fetch(`${running.gateway.url}/v1/messages`, {
      method: 'POST',
      headers: {
        'x-api-key': running.token,
        'anthropic-version': '2023-06-01',
        'anthropic-beta': 'prompt-caching-2024-07-31',
        'content-type': 'application/json',
      },
      body: sent,
    });
    expect(response.status).toBe(200);
    const upstreamRequest = anthropic.requests.at(-1);
    expect(upstreamRequest?.rawBody.toString('utf8')).toBe(sent.replace('"claude-sonnet"', `"${UPSTREAM_MODEL}"`));
    expect(upstreamRequest?.headers['anthropic-beta']).toBe('prompt-caching-2024-07-31');
    expect(upstreamRequest?.headers['x-api-key']).toBe(API_KEY);
    const recorded = JSON.parse(fixture('message.json')) as Record<string, unknown>;
    expect(await response.json()).toEqual({ ...recorded, model: 'claude-sonnet' });
  });

  it('streams the upstream events byte for byte but for the model, and the SDK reads them', async () => {
    anthropic.options = { streamFixture: 'stream-tool-use-cached.sse' };
    const stream = client.messages.stream({
      model: 'claude-sonnet',
      max_tokens: 1024,
      messages: [{ role: 'user', content: 'Read the file' }],
      tools: [{ name: 'Read', input_schema: { type: 'object', properties: { file_path: { type: 'string' } } } }],
    });
    const message = await stream.finalMessage();
    expect(message.model).toBe('claude-sonnet');
    expect(message.usage).toMatchObject({ cache_creation_input_tokens: 22, cache_read_input_tokens: 13993 });
    expect(message.content.some((block) => block.type === 'tool_use' && block.name === 'Read')).toBe(true);
    const row = await running.logRow(stream.response?.headers.get('x-request-id') ?? null);
    expect(row).toMatchObject({ endpoint: 'messages', model: 'claude-sonnet', status: 200 });
    // Every prompt token counted (2 input, 22 written to the cache, 13,993 read from it), each kind at its price.
    expect(row).toMatchObject({ promptTokens: 14017, cachedTokens: 13993, cacheWriteTokens: 22, completionTokens: 61 });
    expect(row.costUsd).toBeCloseTo((2 * 3 + 22 * 3.75 + 13993 * 0.3 + 61 * 15) / 1_000_000, 10);
  });

  it('passes count_tokens on to the upstream', async () => {
    const count = await client.messages.countTokens({ model: 'claude-sonnet', messages: [{ role: 'user', content: 'Hi' }] });
    expect(anthropic.requests.at(-1)?.path).toBe('/v1/messages/count_tokens');
    expect(count.input_tokens).toBe(anthropic.requests.at(-1)?.rawBody.length);
  });
});

describe('POST /v1/messages converted for an OpenAI upstream', () => {
  it('answers a message in Anthropic shape, with the request sent as chat completions', async () => {
    const message = await client.messages.create({
      model: 'gpt-mini',
      max_tokens: 256,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Hello' }],
      stop_sequences: ['END'],
    });
    expect(message).toMatchObject({ type: 'message', role: 'assistant', model: 'gpt-mini', stop_reason: 'end_turn', stop_sequence: null });
    expect(message.id).toMatch(/^msg_/);
    expect(messageSchemaErrors(message)).toEqual([]);
    expect(message.content[0]?.type).toBe('text');
    const chat = openai.requests.at(-1)?.body as Record<string, unknown>;
    expect(chat).toMatchObject({
      model: 'gpt-4o-mini',
      max_tokens: 256,
      stop: ['END'],
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello' },
      ],
    });
  });

  it('streams Anthropic events in order, a tool call included, and the SDK puts the message together', async () => {
    const stream = client.messages.stream({
      model: 'gpt-mini',
      max_tokens: 256,
      messages: [{ role: 'user', content: 'Read the file' }],
      tools: [{ name: 'read_file', description: 'Reads a file', input_schema: { type: 'object', properties: { path: { type: 'string' } } } }],
    });
    const message = await stream.finalMessage();
    expect(message.stop_reason).toBe('tool_use');
    const toolUse = message.content.find((block) => block.type === 'tool_use');
    expect(toolUse).toMatchObject({ type: 'tool_use', name: 'read_file' });
    expect(typeof (toolUse as { input: unknown }).input).toBe('object');
    expect((openai.requests.at(-1)?.body as Record<string, unknown>)['stream_options']).toEqual({ include_usage: true });
  });

  it("sends the events in Anthropic's order: message_start, ping, each block's start, deltas and stop, message_delta, message_stop", async () => {
    const response = await fetch(`${running.gateway.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': running.token, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-mini', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'Hello' }] }),
    });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = (await response.text()).split('\n\n').filter(Boolean);
    const names = events.map((event) => /^event: (.*)$/m.exec(event)?.[1]);
    expect(names.slice(0, 3)).toEqual(['message_start', 'ping', 'content_block_start']);
    expect(names.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
    expect(new Set(names.slice(3, -3))).toEqual(new Set(['content_block_delta']));
    for (const event of events) {
      const name = /^event: (.*)$/m.exec(event)?.[1];
      const data = JSON.parse(/^data: (.*)$/m.exec(event)?.[1] ?? 'null') as { type: string };
      expect(data.type).toBe(name);
      expect(streamEventSchemaErrors(data)).toEqual([]);
    }
  });

  it('refuses, naming it, what only Anthropic can do', async () => {
    const error = await client.messages
      .create({ model: 'gpt-mini', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }], tools: [{ type: 'web_search_20250305', name: 'web_search' }] })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringContaining('web_search_20250305') },
    });
    expect(openai.requests).toHaveLength(0);
  });
});

describe('model aliases', () => {
  it('reach the model by an exact name or a prefix, answer with its id, and are listed with the model they stand for', async () => {
    const exact = await client.messages.create({ model: 'claude-sonnet-5-5', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] });
    expect(exact.model).toBe('claude-sonnet');
    const prefixed = await client.messages.create({ model: 'claude-opus-5-5', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] });
    expect(prefixed.model).toBe('claude-sonnet');
    expect((anthropic.requests.at(-1)?.body as { model: string }).model).toBe(UPSTREAM_MODEL);
    const listed = await running.client.models.list();
    const ids = listed.data.map((model) => model.id);
    expect(ids).toEqual(['claude-sonnet', 'claude-sonnet-5-5', 'gpt-mini']);
    expect(listed.data[1]).toMatchObject({ id: 'claude-sonnet-5-5', alias_of: 'claude-sonnet', type: 'chat' });
    expect(await running.client.models.retrieve('claude-opus-5-5')).toMatchObject({ id: 'claude-opus-5-5', alias_of: 'claude-sonnet' });
  });
});

describe('errors in Anthropic shape', () => {
  it('401 for a missing key, 404 for an unknown model, 400 for a missing max_tokens', async () => {
    const anonymous = await fetch(`${running.gateway.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(anonymous.status).toBe(401);
    const anonymousBody = await anonymous.json();
    expect(anonymousBody).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    expect(errorBodySchemaErrors(anonymousBody)).toEqual([]);
    const unknown = await client.messages
      .create({ model: 'no-such-model', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] })
      .catch((caught: unknown) => caught);
    expect(unknown).toBeInstanceOf(Anthropic.NotFoundError);
    const noMax = await fetch(`${running.gateway.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': running.token, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-mini', messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(noMax.status).toBe(400);
    expect(await noMax.json()).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: Field required' } });
  });

  it('an upstream that is overloaded is 529 overloaded_error once no credential is left', async () => {
    anthropic.failNext({ status: 529 }, 10);
    const response = await fetch(`${running.gateway.url}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${running.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-sonnet', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(response.status).toBe(529);
    expect(await response.json()).toEqual({ type: 'error', error: { type: 'overloaded_error', message: expect.stringContaining('upstream provider failed') } });
  });
});

describe('a Claude Code session over a pool of Anthropic keys', () => {
  it('stays on one key, moves at once when that key is rate limited, and stays where it moved', async () => {
    const second = await startFakeAnthropicUpstream({ apiKey: API_KEY });
    const pooled = await startTestGateway({
      upstreams: [
        { id: 'key-a', provider: 'anthropic', base_url: anthropic.url, api_key: API_KEY },
        { id: 'key-b', provider: 'anthropic', base_url: second.url, api_key: API_KEY },
      ],
      models: [
        {
          id: 'claude-pool',
          type: 'chat',
          routes: [
            { upstream: 'key-a', model: UPSTREAM_MODEL },
            { upstream: 'key-b', model: UPSTREAM_MODEL },
          ],
        },
      ],
    });
    try {
      const turn = async () => {
        const response = await fetch(`${pooled.gateway.url}/v1/messages`, {
          method: 'POST',
          headers: { 'x-api-key': pooled.token, 'content-type': 'application/json', 'x-claude-code-session-id': 'session-7' },
          body: JSON.stringify({ model: 'claude-pool', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }),
        });
        expect(response.status).toBe(200);
        await response.arrayBuffer();
        return { affinity: response.headers.get('x-session-affinity'), source: response.headers.get('x-session-source') };
      };
      const servedBy = () => (anthropic.requests.length > 0 ? anthropic : second);
      expect(await turn()).toEqual({ affinity: 'new', source: 'claude_code' });
      const bound = servedBy();
      const other = bound === anthropic ? second : anthropic;
      expect(await turn()).toEqual({ affinity: 'kept', source: 'claude_code' });
      expect(other.requests).toHaveLength(0);

      bound.failNext({ status: 429, headers: { 'retry-after': '30' } });
      expect(await turn()).toEqual({ affinity: 'moved', source: 'claude_code' });
      expect(other.requests).toHaveLength(1);
      expect(await turn()).toEqual({ affinity: 'kept', source: 'claude_code' });
      expect(other.requests).toHaveLength(2);
      // The limited key was asked once more (the 429), never again.
      expect(bound.requests).toHaveLength(3);
    } finally {
      await pooled.close();
      await second.close();
    }
  });
});

describe('limits and quotas on /v1/messages', () => {
  it("counts a Messages request as chat's are counted, and refuses the one over the limit in Anthropic's shape, with Retry-After", async () => {
    const { secret } = await running.gateway.tokens.create({ team: 'messages-limited', scopes: ['chat'], limits: { rpm: 1 } });
    const limited = new Anthropic({ baseURL: running.gateway.url, apiKey: secret, maxRetries: 0 });
    await limited.messages.create({ model: 'gpt-mini', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] });
    const refused = await limited.messages
      .create({ model: 'gpt-mini', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] })
      .catch((caught: unknown) => caught);
    expect(refused).toBeInstanceOf(Anthropic.RateLimitError);
    const error = refused as InstanceType<typeof Anthropic.RateLimitError>;
    expect(error.error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
    expect(Number(error.headers?.get('retry-after'))).toBeGreaterThan(0);
    expect(openai.requests).toHaveLength(1);
  });
});
