import { describe, expect, it } from 'vitest';
import { splitIntoPieces } from '../../../test/fake-upstreams/sse-framing.js';
import { conformanceErrors } from '../../../test/support/openai-conformance.js';
import { GatewayError } from '../../errors/index.js';
import type { ChatStreamEvent } from '../provider-adapter.js';
import type { ChatCompletionChunk } from '../../protocols/openai-chat/chat-types.js';
import { readResponsesAsChatStream } from './codex-chat-stream.js';

const CREATED = 1_788_000_000;
const RESPONSE_ID = 'resp_0775572d10a16b66006a8d85285ef487';

type Event = Record<string, unknown> & { type: string };

/** The backend's framing: an `event:` line naming the type, then the JSON. */
function sse(events: readonly Event[]): Buffer {
  return Buffer.from(events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join(''));
}

function response(status: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: RESPONSE_ID,
    object: 'response',
    created_at: 1_787_659_560,
    status,
    model: 'gpt-5.1-codex',
    output: [],
    error: null,
    incomplete_details: null,
    usage: null,
    ...extra,
  };
}

const USAGE = {
  input_tokens: 1_200,
  input_tokens_details: { cached_tokens: 1_024 },
  output_tokens: 90,
  output_tokens_details: { reasoning_tokens: 64 },
  total_tokens: 1_290,
};

const start: Event[] = [
  { type: 'response.created', response: response('in_progress'), sequence_number: 0 },
  { type: 'response.in_progress', response: response('in_progress'), sequence_number: 1 },
];

function textDeltas(itemId: string, outputIndex: number, pieces: readonly string[]): Event[] {
  return [
    {
      type: 'response.output_item.added',
      item: { id: itemId, type: 'message', status: 'in_progress', content: [], role: 'assistant' },
      output_index: outputIndex,
    },
    {
      type: 'response.content_part.added',
      item_id: itemId,
      output_index: outputIndex,
      content_index: 0,
      part: { type: 'output_text', annotations: [], text: '' },
    },
    ...pieces.map(
      (delta): Event => ({ type: 'response.output_text.delta', item_id: itemId, output_index: outputIndex, content_index: 0, delta, logprobs: [] }),
    ),
    { type: 'response.output_text.done', item_id: itemId, output_index: outputIndex, content_index: 0, text: pieces.join('') },
    {
      type: 'response.output_item.done',
      item: { id: itemId, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', annotations: [], text: pieces.join('') }] },
      output_index: outputIndex,
    },
  ];
}

const reasoning: Event[] = [
  { type: 'response.output_item.added', item: { id: 'rs_1', type: 'reasoning', summary: [] }, output_index: 0 },
  { type: 'response.reasoning_summary_text.delta', item_id: 'rs_1', output_index: 0, summary_index: 0, delta: '**Thinking**' },
  { type: 'response.output_item.done', item: { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: '**Thinking**' }] }, output_index: 0 },
];

const completed = (extra: Record<string, unknown> = {}): Event => ({ type: 'response.completed', response: response('completed', { usage: USAGE, ...extra }) });

const TEXT_STREAM = sse([...start, ...reasoning, ...textDeltas('msg_1', 1, ['Bonjour', ' à vous', ' 👋', '!']), completed()]);

/** An upstream body as the network delivers it, which records whether the reader let it go. */
class FakeBody implements AsyncIterableIterator<Buffer> {
  returned = false;
  private index = 0;

  constructor(
    private readonly pieces: readonly Buffer[],
    private readonly failure?: Error,
  ) {}

  async next(): Promise<IteratorResult<Buffer>> {
    const piece = this.pieces[this.index];
    this.index++;
    if (piece !== undefined) return { value: piece, done: false };
    if (this.failure !== undefined) throw this.failure;
    return { value: undefined, done: true };
  }

  async return(): Promise<IteratorResult<Buffer>> {
    this.returned = true;
    return { value: undefined, done: true };
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<Buffer> {
    return this;
  }
}

const context = { upstreamId: 'chatgpt-1', model: 'gpt-5.1-codex', created: CREATED };

async function collect(body: FakeBody, options: Partial<typeof context> & { maxEventBytes?: number } = {}): Promise<ChatStreamEvent[]> {
  const events: ChatStreamEvent[] = [];
  for await (const event of readResponsesAsChatStream(body, { ...context, ...options })) events.push(event);
  return events;
}

async function failure(body: FakeBody, options: { maxEventBytes?: number } = {}): Promise<{ error: GatewayError; events: ChatStreamEvent[] }> {
  const events: ChatStreamEvent[] = [];
  try {
    for await (const event of readResponsesAsChatStream(body, { ...context, ...options })) events.push(event);
  } catch (error) {
    if (error instanceof GatewayError) return { error, events };
    throw error;
  }
  throw new Error('expected the stream to fail');
}

const chunks = (events: readonly ChatStreamEvent[]) => events.map((event) => JSON.parse(event.data) as ChatCompletionChunk);
const deltas = (events: readonly ChatStreamEvent[]) => chunks(events).map((chunk) => chunk.choices[0]?.delta ?? null);
const finishReasons = (events: readonly ChatStreamEvent[]) => chunks(events).map((chunk) => chunk.choices[0]?.finish_reason ?? null);

function expectConformingChunks(events: readonly ChatStreamEvent[]): void {
  for (const chunk of chunks(events)) expect(conformanceErrors('CreateChatCompletionStreamResponse', chunk)).toEqual([]);
}

describe('readResponsesAsChatStream', () => {
  it('turns a text stream, split at odd byte boundaries, into chat chunks with usage at the end', async () => {
    for (const sizes of [[1], [3, 7, 13, 29], [2, 5], [65_536]]) {
      const body = new FakeBody(splitIntoPieces(TEXT_STREAM, sizes));
      const events = await collect(body);
      expect(deltas(events)).toEqual([
        { role: 'assistant', content: '' },
        { content: 'Bonjour' },
        { content: ' à vous' },
        { content: ' 👋' },
        { content: '!' },
        {},
        null,
      ]);
      expect(finishReasons(events)).toEqual([null, null, null, null, null, 'stop', null]);
      for (const chunk of chunks(events)) {
        expect(chunk).toMatchObject({ id: `chatcmpl-${RESPONSE_ID}`, object: 'chat.completion.chunk', created: CREATED, model: 'gpt-5.1-codex' });
      }
      expectConformingChunks(events);
      expect(events.map((event) => event.text).join('')).toBe('Bonjour à vous 👋!');
      expect(events.slice(0, -1).every((event) => !event.usageOnly && event.usage === null)).toBe(true);
      const last = events[events.length - 1];
      expect(last).toMatchObject({
        usageOnly: true,
        text: '',
        usage: { promptTokens: 1_200, completionTokens: 90, totalTokens: 1_290, cachedTokens: 1_024, reasoningTokens: 64 },
      });
      expect(chunks(events).at(-1)).toMatchObject({
        choices: [],
        usage: {
          prompt_tokens: 1_200,
          completion_tokens: 90,
          total_tokens: 1_290,
          prompt_tokens_details: { cached_tokens: 1_024 },
          completion_tokens_details: { reasoning_tokens: 64 },
        },
      });
      expect(body.returned).toBe(true);
    }
  });

  it("reads CRLF line ends, and takes the response's created_at when none is given", async () => {
    const crlf = Buffer.from(TEXT_STREAM.toString('utf8').replace(/\n/g, '\r\n'));
    const events: ChatStreamEvent[] = [];
    for await (const event of readResponsesAsChatStream(new FakeBody(splitIntoPieces(crlf, [5, 1, 2])), { upstreamId: 'chatgpt-1', model: 'gpt-5.1-codex' }))
      events.push(event);
    expect(events.map((event) => event.text).join('')).toBe('Bonjour à vous 👋!');
    expect(chunks(events).every((chunk) => chunk.created === 1_787_659_560)).toBe(true);
  });

  it('streams function calls as tool calls numbered in order, after the text, and finishes with tool_calls', async () => {
    const stream = sse([
      ...start,
      ...textDeltas('msg_1', 0, ['Checking.']),
      {
        type: 'response.output_item.added',
        item: { id: 'fc_1', type: 'function_call', status: 'in_progress', arguments: '', call_id: 'call_paris', name: 'get_weather' },
        output_index: 1,
      },
      ...['{"', 'city', '":"', 'Paris', '"}'].map(
        (delta): Event => ({ type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 1, delta }),
      ),
      { type: 'response.function_call_arguments.done', item_id: 'fc_1', output_index: 1, arguments: '{"city":"Paris"}' },
      {
        type: 'response.output_item.done',
        item: { id: 'fc_1', type: 'function_call', status: 'completed', arguments: '{"city":"Paris"}', call_id: 'call_paris', name: 'get_weather' },
        output_index: 1,
      },
      // A call whose arguments come only with its final item.
      {
        type: 'response.output_item.added',
        item: { id: 'fc_2', type: 'function_call', status: 'in_progress', arguments: '', call_id: 'call_oslo', name: 'get_weather' },
        output_index: 2,
      },
      {
        type: 'response.output_item.done',
        item: { id: 'fc_2', type: 'function_call', status: 'completed', arguments: '{"city":"Oslo"}', call_id: 'call_oslo', name: 'get_weather' },
        output_index: 2,
      },
      completed(),
    ]);
    const events = await collect(new FakeBody(splitIntoPieces(stream, [7, 11])));
    expect(deltas(events)).toEqual([
      { role: 'assistant', content: '' },
      { content: 'Checking.' },
      { tool_calls: [{ index: 0, id: 'call_paris', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"' } }] },
      { tool_calls: [{ index: 0, function: { arguments: 'city' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '":"' } }] },
      { tool_calls: [{ index: 0, function: { arguments: 'Paris' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '"}' } }] },
      { tool_calls: [{ index: 1, id: 'call_oslo', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
      { tool_calls: [{ index: 1, function: { arguments: '{"city":"Oslo"}' } }] },
      {},
      null,
    ]);
    expect(finishReasons(events).filter((reason) => reason !== null)).toEqual(['tool_calls']);
    expect(events.map((event) => event.text).join('')).toBe('Checking.get_weather{"city":"Paris"}get_weather{"city":"Oslo"}');
    expectConformingChunks(events);
  });

  it('sends a message that came whole, without deltas, from its final item', async () => {
    const stream = sse([
      ...start,
      {
        type: 'response.output_item.done',
        item: { id: 'msg_9', type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'All at once.' }] },
        output_index: 0,
      },
      completed(),
    ]);
    expect(deltas(await collect(new FakeBody([stream])))).toEqual([{ role: 'assistant', content: '' }, { content: 'All at once.' }, {}, null]);
  });

  it('finishes an incomplete response with length or content_filter, with its usage', async () => {
    for (const [reason, finish] of [
      ['max_output_tokens', 'length'],
      ['content_filter', 'content_filter'],
    ] as const) {
      const stream = sse([
        ...start,
        ...textDeltas('msg_1', 0, ['Once upon']),
        { type: 'response.incomplete', response: response('incomplete', { incomplete_details: { reason }, usage: USAGE }) },
      ]);
      const events = await collect(new FakeBody([stream]));
      expect(finishReasons(events)).toEqual([null, null, finish, null]);
      expect(events.at(-1)?.usageOnly).toBe(true);
      expectConformingChunks(events);
    }
  });

  it('answers an empty completion with the role chunk, the finish chunk, and no usage chunk when none came', async () => {
    const events = await collect(new FakeBody([sse([...start, { type: 'response.completed', response: response('completed') }])]));
    expect(deltas(events)).toEqual([{ role: 'assistant', content: '' }, {}]);
    expect(events.every((event) => !event.usageOnly)).toBe(true);
  });

  it('fails before any chunk when the response fails right after it was created, so another credential can be tried', async () => {
    const stream = sse([
      ...start,
      {
        type: 'response.failed',
        response: response('failed', { error: { code: 'rate_limit_exceeded', message: 'Rate limit reached for gpt-5.1-codex. Please try again in 1.5s.' } }),
      },
    ]);
    const body = new FakeBody([stream]);
    const { error, events } = await failure(body);
    expect(events).toEqual([]);
    expect(error.code).toBe('upstream_rate_limited');
    expect(error.retryAfterSeconds).toBe(2);
    expect(error.upstream).toMatchObject({ class: 'rate_limit', status: null, retryAfterSeconds: 2, credentialId: 'chatgpt-1' });
    expect(body.returned).toBe(true);
  });

  it('classifies the failures the backend reports in the stream by their code', async () => {
    const cases: Array<[Event, string, string, number | null]> = [
      [
        {
          type: 'response.failed',
          response: response('failed', { error: { code: 'usage_limit_reached', message: 'The usage limit has been reached', resets_in_seconds: 3_600 } }),
        },
        'quota',
        'upstream_auth_failed',
        3_600,
      ],
      // The recorded shape: the error nested under `error`.
      [
        {
          type: 'error',
          sequence_number: 2,
          error: { type: 'insufficient_quota', code: 'insufficient_quota', message: 'You exceeded your current quota.', param: null },
        },
        'quota',
        'upstream_auth_failed',
        null,
      ],
      // The documented shape: the error's fields on the event.
      [
        { type: 'error', code: 'server_is_overloaded', message: 'Selected model is at capacity.', param: null, sequence_number: 2 },
        'overloaded',
        'upstream_error',
        null,
      ],
      [
        { type: 'response.failed', response: response('failed', { error: { code: 'slow_down', message: 'Slow down.' } }) },
        'overloaded',
        'upstream_error',
        null,
      ],
      [
        { type: 'response.failed', response: response('failed', { error: { code: 'usage_not_included', message: 'Upgrade to Plus.' } }) },
        'auth',
        'upstream_auth_failed',
        null,
      ],
      [
        {
          type: 'response.failed',
          response: response('failed', { error: { code: 'context_length_exceeded', message: 'Your input exceeds the context window.' } }),
        },
        'caller',
        'upstream_bad_request',
        null,
      ],
      [
        { type: 'error', error: { type: 'invalid_request_error', code: 'invalid_value', message: 'Invalid image.', param: 'input[0].content[1]' } },
        'caller',
        'upstream_bad_request',
        null,
      ],
      [
        { type: 'response.failed', response: response('failed', { error: { code: 'server_error', message: 'An error occurred.' } }) },
        'server',
        'upstream_error',
        null,
      ],
      [{ type: 'response.failed', response: response('failed') }, 'server', 'upstream_error', null],
    ];
    for (const [event, failureClass, code, retryAfter] of cases) {
      const { error, events } = await failure(new FakeBody([sse([...start, event])]));
      expect(
        { class: error.upstream?.class, code: error.code, retryAfter: error.upstream?.retryAfterSeconds, events: events.length },
        JSON.stringify(event),
      ).toEqual({
        class: failureClass,
        code,
        retryAfter,
        events: 0,
      });
    }
  });

  it("keeps the caller's mistake and its param for the client", async () => {
    const { error } = await failure(
      new FakeBody([
        sse([
          ...start,
          { type: 'error', error: { type: 'invalid_request_error', code: 'invalid_value', message: 'Invalid image.', param: 'input[0].content[1]' } },
        ]),
      ]),
    );
    expect({ message: error.message, param: error.param, status: error.status }).toEqual({
      message: 'Invalid image.',
      param: 'input[0].content[1]',
      status: 400,
    });
  });

  it('fails mid-stream after the chunks already sent when the response fails after its first output', async () => {
    const stream = sse([
      ...start,
      ...textDeltas('msg_1', 0, ['Partial']),
      { type: 'response.failed', response: response('failed', { error: { code: 'server_error', message: 'boom' } }) },
    ]);
    const { error, events } = await failure(new FakeBody([stream]));
    expect(deltas(events)).toEqual([{ role: 'assistant', content: '' }, { content: 'Partial' }]);
    expect(error.code).toBe('upstream_error');
  });

  it('treats a stream that ends without response.completed as an invalid response', async () => {
    const body = new FakeBody([sse([...start, ...textDeltas('msg_1', 0, ['Cut'])])]);
    const { error, events } = await failure(body);
    expect(events).toHaveLength(2);
    expect(error.code).toBe('upstream_invalid_response');
    expect(error.upstream?.class).toBe('protocol');
    expect(body.returned).toBe(true);
  });

  it('refuses an event that is not JSON, and one over the size cap', async () => {
    expect((await failure(new FakeBody([Buffer.from('data: {not json\n\n')]))).error.code).toBe('upstream_invalid_response');
    expect((await failure(new FakeBody([Buffer.from('data: 42\n\n')]))).error.code).toBe('upstream_invalid_response');
    expect((await failure(new FakeBody([TEXT_STREAM]), { maxEventBytes: 256 })).error.code).toBe('upstream_invalid_response');
  });

  it('classifies a transport failure while reading, and lets the body go', async () => {
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    const body = new FakeBody([sse([...start, ...textDeltas('msg_1', 0, ['Hel'])])], reset);
    const { error, events } = await failure(body);
    expect(events).toHaveLength(2);
    expect(error.code).toBe('upstream_error');
    expect(error.upstream).toMatchObject({ class: 'connect', credentialId: 'chatgpt-1' });
    expect(body.returned).toBe(true);
  });

  it('lets the body go when the client stops reading early', async () => {
    const body = new FakeBody(splitIntoPieces(TEXT_STREAM, [64]));
    for await (const event of readResponsesAsChatStream(body, context)) {
      expect(event.usageOnly).toBe(false);
      break;
    }
    expect(body.returned).toBe(true);
  });
});
