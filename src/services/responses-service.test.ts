import { describe, expect, it } from 'vitest';
import type { Principal } from '../access/index.js';
import { parseResponsesRequest } from '../api/responses-request.js';
import { GatewayError } from '../errors/index.js';
import type {
  Attempt,
  ChatCall,
  ChatCompletionResult,
  ChatProvider,
  ChatStreamEvent,
  ResponsesCall,
  ResponsesProvider,
  ResponsesResult,
  StatelessResponsesCall,
  StatelessResponsesProvider,
} from '../providers/provider-adapter.js';
import type { ResponseStreamEvent } from '../protocols/openai-responses/responses-types.js';
import { ModelCatalog, Router, type CatalogModel, type Route } from '../routing/index.js';
import { RequestRecord } from '../usage/index.js';
import { ResponsesService, type ResponsesInput, type ResponsesOutcome, type ResponsesServiceOptions } from './responses-service.js';
import { ResponseStore, type ResponseStateStore } from './responses/response-store.js';
import { streamEventSchemaErrors } from '../protocols/openai-responses/openai-responses-schema-contract.js';

const PRINCIPAL: Principal = {
  tokenId: 'tok_1',
  team: 'search',
  project: null,
  scopes: new Set(['chat']),
  models: null,
  expiresAt: null,
  revokedAt: null,
  hash: 'h',
  holders: [],
};
const CHAT_USAGE = { prompt_tokens: 20, completion_tokens: 7, total_tokens: 27 };

/** A chat upstream that answers `text`, remembering each body it was sent; `usage: false` reports none. */
class FakeChat implements ChatProvider {
  readonly bodies: Array<Record<string, unknown>> = [];
  constructor(
    private readonly text: string,
    private readonly options: { usage?: boolean; failMidStream?: boolean } = {},
  ) {}

  async chatCompletion(_attempt: Attempt, call: ChatCall): Promise<ChatCompletionResult> {
    this.bodies.push(call.body);
    const usage = this.options.usage === false ? undefined : CHAT_USAGE;
    const completion = {
      id: 'c',
      object: 'chat.completion',
      created: 1,
      model: call.body.model,
      choices: [{ index: 0, message: { role: 'assistant', content: this.text }, finish_reason: 'stop' }],
      usage,
    };
    return {
      payload: Buffer.from(JSON.stringify(completion)),
      usage: usage === undefined ? null : { promptTokens: 20, completionTokens: 7, totalTokens: 27 },
      completionText: () => this.text,
    };
  }

  async streamChatCompletion(_attempt: Attempt, call: ChatCall): Promise<AsyncIterable<ChatStreamEvent>> {
    this.bodies.push(call.body);
    const { text, options } = this;
    return (async function* () {
      const chunk = (delta: Record<string, unknown>, finish: string | null): string =>
        JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] });
      yield { data: chunk({ role: 'assistant', content: text }, null), usage: null, usageOnly: false, text };
      if (options.failMidStream === true) throw new GatewayError('upstream_timeout', 'Upstream secret-credential sent nothing for 300000 ms.');
      yield { data: chunk({}, 'stop'), usage: null, usageOnly: false, text: '' };
      if (options.usage !== false) {
        yield {
          data: JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [], usage: CHAT_USAGE }),
          usage: { promptTokens: 20, completionTokens: 7, totalTokens: 27 },
          usageOnly: true,
          text: '',
        };
      }
    })();
  }
}

/** An upstream that speaks the Responses API, remembering each body; `fail` makes it answer 500 (failover). */
class FakeResponses implements ResponsesProvider {
  readonly bodies: Array<Record<string, unknown>> = [];
  fail = false;

  async createResponse(attempt: Attempt, call: ResponsesCall): Promise<ResponsesResult> {
    this.bodies.push(call.body);
    if (this.fail) throw new GatewayError('upstream_error', `Upstream ${attempt.credential.id} answered 500.`);
    const response = { id: 'resp_upstream', object: 'response', output: [], usage: { input_tokens: 5, output_tokens: 1, total_tokens: 6 } };
    if (!call.stream)
      return {
        kind: 'json',
        payload: Buffer.from(JSON.stringify(response)),
        usage: { promptTokens: 5, completionTokens: 1, totalTokens: 6 },
        responseId: 'resp_upstream',
      };
    let named = false;
    const body = (async function* () {
      named = true;
      yield Buffer.from(`event: response.created\ndata: ${JSON.stringify({ type: 'response.created', response })}\n\n`);
      yield Buffer.from(`event: response.completed\ndata: ${JSON.stringify({ type: 'response.completed', response })}\n\n`);
    })();
    return { kind: 'stream', body, usage: () => null, responseId: () => (named ? 'resp_upstream' : null) };
  }
}

/**
 * A Responses upstream that keeps nothing (codex), remembering each body: `failBeforeOutput` fails
 * in-band right after `response.created` (a usage limit), `failMidStream` after its first text.
 */
class FakeStateless implements StatelessResponsesProvider {
  readonly bodies: StatelessResponsesCall['body'][] = [];
  constructor(private readonly plan: 'answer' | 'failBeforeOutput' | 'failMidStream' = 'answer') {}

  async streamResponse(attempt: Attempt, call: StatelessResponsesCall): Promise<AsyncIterable<ResponseStreamEvent>> {
    this.bodies.push(call.body);
    const { plan } = this;
    return (async function* (): AsyncGenerator<ResponseStreamEvent> {
      yield { type: 'response.created', response: { id: 'resp_upstream', status: 'in_progress' } };
      if (plan === 'failBeforeOutput') throw new GatewayError('upstream_error', `Upstream ${attempt.credential.id}: the server is overloaded.`);
      yield { type: 'response.output_text.delta', item_id: 'msg_up', output_index: 0, delta: 'Hello' };
      if (plan === 'failMidStream') throw new GatewayError('upstream_error', `Upstream ${attempt.credential.id} failed.`);
      yield { type: 'response.completed', response: { status: 'completed', usage: { input_tokens: 9, output_tokens: 1, total_tokens: 10 } } };
    })();
  }
}

function route(
  id: string,
  chat: ChatProvider,
  responses: ResponsesProvider | null,
  priority = 0,
  statelessResponses: StatelessResponsesProvider | null = null,
): Route<'chat'> {
  return {
    credential: { id, apiKey: undefined, headers: {} },
    upstreamModel: `${id}-model`,
    weight: 1,
    priority,
    maxInFlight: null,
    credentialHash: 0,
    provider: chat,
    native: null,
    responses,
    statelessResponses,
  };
}

function model(id: string, routes: Route<'chat'>[]): CatalogModel<'chat'> {
  return { id, type: 'chat', ownedBy: 'test', created: 0, routes, totalWeight: routes.length, strategy: 'ordered' };
}

function mapState(): ResponseStateStore {
  const values = new Map<string, string>();
  return {
    get: async (key) => values.get(key) ?? null,
    setWithinBudget: async (_pool, _group, entries) => {
      for (const { key, value } of entries) values.set(key, value);
      return { stored: true, evicted: 0 };
    },
  };
}

function setup(
  models: CatalogModel<'chat'>[],
  options: ResponsesServiceOptions = {},
): {
  service: ResponsesService;
  call: (body: Record<string, unknown>, extra?: Partial<ResponsesInput>) => Promise<{ outcome: ResponsesOutcome; record: RequestRecord }>;
} {
  const service = new ResponsesService(
    new ModelCatalog(models),
    new Router(),
    new ResponseStore(mapState(), 60_000, { teamBytes: 1_000_000, totalBytes: 1_000_000 }, () => undefined),
    options,
  );
  return {
    service,
    async call(body, extra = {}) {
      const record = new RequestRecord('req_1', 'responses');
      const outcome = await service.create({
        principal: PRINCIPAL,
        record,
        cancellation: new AbortController().signal,
        request: parseResponsesRequest(body),
        failedMidStream: (error) =>
          error instanceof GatewayError ? new GatewayError(error.code, 'What the caller is told.') : new GatewayError('internal_error', 'bug'),
        ...extra,
      });
      return { outcome, record };
    },
  };
}

function json(outcome: ResponsesOutcome): Record<string, unknown> {
  if (outcome.kind !== 'json') throw new Error(`expected JSON, got ${outcome.kind}`);
  return JSON.parse(Buffer.from(outcome.payload).toString('utf8')) as Record<string, unknown>;
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

describe('ResponsesService: which path each route takes', () => {
  it('fails over from a passthrough credential to a converting one within one request', async () => {
    const openai = new FakeResponses();
    openai.fail = true;
    const claude = new FakeChat('Bonjour');
    const { call } = setup([model('mixed', [route('openai', new FakeChat('unused'), openai, 0), route('claude', claude, null, 1)])]);
    const { outcome, record } = await call({ model: 'mixed', input: 'Hi', metadata: { session_id: 's-1', purpose: 'eval' } });
    expect(openai.bodies).toEqual([{ model: 'openai-model', input: 'Hi', metadata: { purpose: 'eval' } }]);
    expect(claude.bodies).toEqual([{ model: 'claude-model', messages: [{ role: 'user', content: 'Hi' }] }]);
    expect(json(outcome)).toMatchObject({ object: 'response', model: 'mixed', output: [{ type: 'message', content: [{ text: 'Bonjour' }] }] });
    expect(record).toMatchObject({
      upstream: 'claude',
      sessionId: 's-1',
      sessionSource: 'metadata.session_id',
      usage: { promptTokens: 20, completionTokens: 7 },
    });
  });

  it('refuses what conversion cannot do before calling anyone when no route passes through, and leaves it to a passthrough upstream otherwise', async () => {
    const claude = new FakeChat('x');
    const openai = new FakeResponses();
    const { call } = setup([model('claude', [route('claude', claude, null)]), model('openai', [route('openai', new FakeChat('unused'), openai)])]);
    await expect(call({ model: 'claude', input: 'Hi', tools: [{ type: 'web_search' }], tool_choice: 'required' })).rejects.toMatchObject({
      code: 'invalid_body',
      param: 'tool_choice',
    });
    await expect(call({ model: 'claude', input: 'Hi', tools: [{ type: 'web_search' }], tool_choice: { type: 'web_search_preview' } })).rejects.toMatchObject({
      code: 'invalid_body',
      param: 'tool_choice',
    });
    await expect(call({ model: 'claude', input: 'Hi', tools: [{ type: 'made_up_tool' }] })).rejects.toMatchObject({
      code: 'invalid_body',
      param: 'tools[0].type',
    });
    expect(claude.bodies).toHaveLength(0);
    await call({ model: 'openai', input: 'Hi', tools: [{ type: 'web_search' }] });
    expect(openai.bodies[0]).toMatchObject({ tools: [{ type: 'web_search' }] });
  });

  it('leaves out a tool the chat upstream cannot run when nothing forces it, saying so once per type', async () => {
    const claude = new FakeChat('x');
    const told: Array<Record<string, unknown>> = [];
    const { call } = setup([model('claude', [route('claude', claude, null)])], { onDroppedTool: (dropped) => told.push({ ...dropped }) });
    const tools = [
      { type: 'function', name: 'exec_command', parameters: { type: 'object', properties: {} } },
      {
        type: 'namespace',
        name: 'multi_agent_v1',
        description: 'Agents.',
        tools: [{ type: 'function', name: 'spawn_agent', parameters: { type: 'object', properties: {} } }],
      },
      { type: 'web_search', external_web_access: false },
    ];
    const { outcome } = await call({ model: 'claude', input: 'Hi', tools, tool_choice: 'auto' });
    await call({ model: 'claude', input: 'Again', tools, tool_choice: 'auto', stream: true });
    await call({ model: 'claude', input: 'Hi', tools: [{ type: 'image_generation' }, { type: 'web_search' }] });
    expect(claude.bodies[0]?.['tools']).toEqual([
      { type: 'function', function: { name: 'exec_command', parameters: { type: 'object', properties: {} } } },
      {
        type: 'function',
        function: { name: 'multi_agent_v1__spawn_agent', description: 'multi_agent_v1: Agents.', parameters: { type: 'object', properties: {} } },
      },
    ]);
    expect(told).toEqual([
      { type: 'web_search', param: 'tools[2]', model: 'claude' },
      { type: 'image_generation', param: 'tools[0]', model: 'claude' },
    ]);
    // The response echoes the tools as the client sent them, as OpenAI does.
    expect(json(outcome)['tools']).toHaveLength(3);
  });

  it('sends what only the Responses API can do to the routes that pass it through, never to a converting one', async () => {
    const openai = new FakeResponses();
    const claude = new FakeChat('x');
    const { call } = setup([model('mixed', [route('claude', claude, null, 0), route('openai', new FakeChat('unused'), openai, 1)])]);
    const { record } = await call({ model: 'mixed', input: 'Hi', tools: [{ type: 'web_search' }] });
    expect(record.upstream).toBe('openai');
    await call({ model: 'mixed', input: 'Hi', previous_response_id: 'resp_only_openai_knows' });
    expect(openai.bodies[1]).toMatchObject({ previous_response_id: 'resp_only_openai_knows' });
    openai.fail = true;
    await expect(call({ model: 'mixed', input: 'Hi', tools: [{ type: 'web_search' }] })).rejects.toMatchObject({ code: 'upstream_error' });
    expect(claude.bodies).toHaveLength(0);
  });

  it('estimates usage from the chat request and text when the upstream reports none', async () => {
    const { call } = setup([model('claude', [route('claude', new FakeChat('Hello there', { usage: false }), null)])]);
    const { record } = await call({ model: 'claude', input: 'Say hello' });
    expect(record.usage).toBeNull();
    expect(record.usageSource).toBe('estimated');
    const estimate = await record.estimateUsage?.();
    expect(estimate?.completionTokens).toBe(2);
  });

  it('remembers the id of a passed-through stream with its session, for the turn that continues it', async () => {
    const openai = new FakeResponses();
    const { call } = setup([model('openai', [route('openai', new FakeChat('unused'), openai)])]);
    const { outcome } = await call({ model: 'openai', input: 'Hi', stream: true, prompt_cache_key: 'cache-7' });
    if (outcome.kind !== 'bytes') throw new Error('expected bytes');
    expect(Buffer.concat(await collect(outcome.body)).toString()).toContain('event: response.completed');
    const { record } = await call({ model: 'openai', input: 'Again', previous_response_id: 'resp_upstream' });
    expect(record).toMatchObject({ sessionId: 'cache-7', sessionSource: 'previous_response_id' });
    expect(openai.bodies[1]).toMatchObject({ previous_response_id: 'resp_upstream', input: 'Again' });
  });
});

describe('ResponsesService: converted streams', () => {
  it('stores the response before its response.completed event leaves, so the next turn finds it', async () => {
    const claude = new FakeChat('Hello');
    const { call } = setup([model('claude', [route('claude', claude, null)])]);
    const { outcome } = await call({ model: 'claude', input: 'Hi', stream: true });
    if (outcome.kind !== 'events') throw new Error('expected events');
    const iterator = outcome.events[Symbol.asyncIterator]();
    let created: Record<string, unknown> | undefined;
    for (let next = await iterator.next(); next.done !== true; next = await iterator.next()) {
      const data = JSON.parse(next.value.data) as { type: string; response?: Record<string, unknown> };
      expect(streamEventSchemaErrors(data)).toEqual([]);
      created ??= data.response;
      if (data.type !== 'response.completed') continue;
      // Asked before the stream is read to its end: the turn is already there.
      await call({ model: 'claude', input: 'And then?', previous_response_id: String(created?.['id']) });
      expect(claude.bodies[1]?.['messages']).toEqual([
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello' },
        { role: 'user', content: 'And then?' },
      ]);
    }
    expect(claude.bodies).toHaveLength(2);
  });

  it('ends a stream that fails mid-way with the error the edge chose, then response.failed; nothing is stored', async () => {
    const { call } = setup([model('claude', [route('claude', new FakeChat('Half', { failMidStream: true }), null)])]);
    const { outcome } = await call({ model: 'claude', input: 'Hi', stream: true });
    if (outcome.kind !== 'events') throw new Error('expected events');
    const events = await collect(outcome.events);
    const error = JSON.parse(events.at(-2)?.data ?? '{}') as Record<string, unknown>;
    expect(error).toMatchObject({ type: 'error', code: 'upstream_timeout', message: 'What the caller is told.' });
    const failed = JSON.parse(events.at(-1)?.data ?? '{}') as { type: string; response: { id: string } };
    expect(failed.type).toBe('response.failed');
    await expect(call({ model: 'claude', input: 'x', previous_response_id: failed.response.id })).rejects.toMatchObject({ param: 'previous_response_id' });
  });
});

describe('ResponsesService: upstreams that speak the Responses API and keep nothing (codex)', () => {
  it('sends them Responses, not chat, and fails over from one whose stream fails before any output', async () => {
    const limited = new FakeStateless('failBeforeOutput');
    const answering = new FakeStateless();
    const unused = new FakeChat('never');
    const { call } = setup([model('codex', [route('chatgpt-a', unused, null, 0, limited), route('chatgpt-b', unused, null, 1, answering)])]);
    const { outcome, record } = await call({
      model: 'codex',
      instructions: 'Be brief.',
      input: 'Hi',
      tools: [{ type: 'namespace', name: 'ns', tools: [{ type: 'function', name: 'f' }] }],
    });
    expect(json(outcome)).toMatchObject({
      model: 'codex',
      status: 'completed',
      output: [{ type: 'message', content: [{ type: 'output_text', text: 'Hello' }] }],
    });
    expect(unused.bodies).toEqual([]);
    expect(limited.bodies).toHaveLength(1);
    expect(answering.bodies[0]).toMatchObject({
      model: 'chatgpt-b-model',
      instructions: 'Be brief.',
      tools: [{ type: 'namespace', name: 'ns' }],
      stream: true,
      store: false,
    });
    expect(record.usage).toEqual({ promptTokens: 9, completionTokens: 1, totalTokens: 10 });
  });

  it('ends a stream that fails after its first output in-band, and stores nothing', async () => {
    const { call } = setup([model('codex', [route('chatgpt-a', new FakeChat('never'), null, 0, new FakeStateless('failMidStream'))])]);
    const { outcome } = await call({ model: 'codex', input: 'Hi', stream: true });
    if (outcome.kind !== 'events') throw new Error(`expected events, got ${outcome.kind}`);
    const events = await collect(outcome.events);
    expect(events.map((event) => event.event).slice(-2)).toEqual(['error', 'response.failed']);
    expect(events.at(-2)?.data).toContain('What the caller is told.');
  });
});

describe('ResponsesService: sessions', () => {
  it('prefers X-Session-Id, then a stored response, then prompt_cache_key, then inference', async () => {
    const { call } = setup([model('claude', [route('claude', new FakeChat('Hello'), null)])]);
    const inferred = await call({ model: 'claude', instructions: 'Be brief.', input: [{ role: 'user', content: 'Hi' }] });
    expect(inferred.record).toMatchObject({ sessionSource: 'inferred' });
    expect(inferred.record.sessionId).toMatch(/^inf_[0-9a-f]{24}$/);
    // The same conversation resent whole (item references, no previous_response_id) infers the same session.
    const resent = await call({
      model: 'claude',
      instructions: 'Be brief.',
      input: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello' },
        { role: 'user', content: 'More' },
      ],
    });
    expect(resent.record.sessionId).toBe(inferred.record.sessionId);
    const id = String(json(inferred.outcome)['id']);
    const continued = await call({ model: 'claude', input: 'More', previous_response_id: id, prompt_cache_key: 'cache-1' });
    expect(continued.record).toMatchObject({ sessionId: inferred.record.sessionId, sessionSource: 'previous_response_id' });
    const cached = await call({ model: 'claude', input: 'More', prompt_cache_key: 'cache-1' });
    expect(cached.record).toMatchObject({ sessionId: 'cache-1', sessionSource: 'prompt_cache_key' });
    const named = await call({ model: 'claude', input: 'More', previous_response_id: id }, { sessionHeader: 'chat-9' });
    expect(named.record).toMatchObject({ sessionId: 'chat-9', sessionSource: 'header' });
  });
});
