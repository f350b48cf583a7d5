import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, streamText, tool, type ModelMessage } from 'ai';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/index.js';
import { chatCompletionToResponse } from '../../protocols/openai-responses/convert-chat-to-response.js';
import { responsesToChat } from '../../protocols/openai-responses/convert-responses-to-chat.js';
import type { ResponseContext } from '../../protocols/openai-responses/response-object.js';
import { ResponsesEventStream } from '../../protocols/openai-responses/responses-event-stream.js';
import type { ResponsesRequest } from '../../protocols/openai-responses/responses-types.js';

/**
 * The official clients against the converters, through a stand-in for the service: the client's
 * request goes through responsesToChat, and a canned chat answer comes back converted. This is
 * what the SDKs require of the wire, beyond the published schema.
 */
interface FakeGateway {
  fetch: typeof globalThis.fetch;
  /** Each request the client sent, and the chat body it became. */
  calls: Array<{ request: ResponsesRequest; chat: Record<string, unknown> }>;
}

type Answer = { completion: unknown } | { chunks: unknown[]; failure?: unknown };

function fakeGateway(answers: Answer[]): FakeGateway {
  const calls: FakeGateway['calls'] = [];
  const fetch = async (_url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = JSON.parse(String(init?.body)) as ResponsesRequest;
    calls.push({ request, chat: responsesToChat(request, []).body });
    const answer = answers.shift();
    if (answer === undefined) throw new Error('no answer left');
    const context: ResponseContext = { id: `resp_${calls.length}`, createdAt: 1_753_343_279, model: request.model, request };
    if ('completion' in answer) {
      return new Response(JSON.stringify(chatCompletionToResponse(answer.completion, context)), { headers: { 'content-type': 'application/json' } });
    }
    const events = new ResponsesEventStream(context).events(chunkSource(answer.chunks, answer.failure));
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = await events.next();
        if (next.done === true) controller.close();
        else controller.enqueue(encoder.encode(`event: ${next.value.event}\ndata: ${next.value.data}\n\n`));
      },
    });
    return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
  };
  return { fetch: fetch as typeof globalThis.fetch, calls };
}

async function* chunkSource(chunks: unknown[], failure: unknown): AsyncGenerator<unknown> {
  for (const chunk of chunks) yield chunk;
  if (failure !== undefined) throw failure;
}

function completion(message: Record<string, unknown>, finishReason: string): unknown {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'upstream',
    choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finishReason }],
    usage: { prompt_tokens: 20, completion_tokens: 7, total_tokens: 27 },
  };
}

function chunk(delta: Record<string, unknown>, finishReason: string | null = null): unknown {
  return { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'upstream', choices: [{ index: 0, delta, finish_reason: finishReason }] };
}

const USAGE_CHUNK = {
  id: 'c',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'upstream',
  choices: [],
  usage: { prompt_tokens: 20, completion_tokens: 7, total_tokens: 27 },
};

const TOOL_STREAM = [
  chunk({ role: 'assistant', content: 'Let me look.' }),
  chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
  chunk({}, 'tool_calls'),
  USAGE_CHUNK,
];

function openaiClient(gateway: FakeGateway): OpenAI {
  return new OpenAI({ apiKey: 'sk-test', baseURL: 'http://gateway.test/v1', fetch: gateway.fetch, maxRetries: 0 });
}

const weatherTool = tool({
  description: 'Current weather in a city',
  inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false }),
});

describe('the official OpenAI SDK (openai-node)', () => {
  it('reads a converted response, computing output_text itself', async () => {
    const gateway = fakeGateway([{ completion: completion({ content: 'Bonjour !' }, 'stop') }]);
    const response = await openaiClient(gateway).responses.create({ model: 'chat', instructions: 'Answer in French.', input: 'Hello' });
    expect(response.output_text).toBe('Bonjour !');
    expect(response.usage?.total_tokens).toBe(27);
    expect(gateway.calls[0]?.chat['messages']).toEqual([
      { role: 'system', content: 'Answer in French.' },
      { role: 'user', content: 'Hello' },
    ]);
  });

  it('accumulates a streamed text and tool call into the final response', async () => {
    const gateway = fakeGateway([{ chunks: TOOL_STREAM }]);
    const stream = openaiClient(gateway).responses.stream({
      model: 'chat',
      input: 'Weather in Paris?',
      tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }],
    });
    const argumentSnapshots: string[] = [];
    stream.on('response.function_call_arguments.delta', (event) => argumentSnapshots.push(event.snapshot));
    const final = await stream.finalResponse();
    expect(final.output_text).toBe('Let me look.');
    expect(final.output.map((item) => item.type)).toEqual(['message', 'function_call']);
    expect(final.output[1]).toMatchObject({ call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' });
    expect(argumentSnapshots).toEqual(['{"city":', '{"city":"Paris"}']);
    expect(gateway.calls[0]?.chat).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('raises an APIError on an in-band error event', async () => {
    const gateway = fakeGateway([{ chunks: [chunk({ content: 'Half' })], failure: new GatewayError('upstream_timeout', 'The upstream stopped sending.') }]);
    const stream = await openaiClient(gateway).responses.create({ model: 'chat', input: 'Hi', stream: true });
    const types: string[] = [];
    const failure = await (async () => {
      try {
        for await (const event of stream) types.push(event.type);
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect((failure as InstanceType<typeof OpenAI.APIError>).message).toContain('The upstream stopped sending.');
    expect(types.at(-1)).toBe('response.output_text.delta');
  });
});

describe('the Vercel AI SDK (openai(model), the Responses API by default)', () => {
  it('generates text and a tool call from a converted response, and sends a multi-turn tool conversation the converter accepts', async () => {
    const gateway = fakeGateway([
      {
        completion: completion(
          { content: 'Checking.', tool_calls: [{ id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } }] },
          'tool_calls',
        ),
      },
    ]);
    const openai = createOpenAI({ apiKey: 'sk-test', baseURL: 'http://gateway.test/v1', fetch: gateway.fetch });
    const messages: ModelMessage[] = [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_1', toolName: 'get_weather', input: { city: 'Paris' } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'get_weather', output: { type: 'text', value: '18°C' } }] },
      { role: 'assistant', content: 'It is 18°C in Paris.' },
      { role: 'user', content: 'And Rome?' },
    ];
    const result = await generateText({
      model: openai('chat'),
      instructions: 'You are a weather bot.',
      messages,
      tools: { get_weather: weatherTool },
      maxRetries: 0,
    });
    expect(result.text).toBe('Checking.');
    expect(result.toolCalls).toMatchObject([{ toolCallId: 'call_2', toolName: 'get_weather', input: { city: 'Rome' } }]);
    expect(result.finishReason).toBe('tool-calls');
    expect(result.usage).toMatchObject({ inputTokens: 20, outputTokens: 7, totalTokens: 27 });
    expect(gateway.calls[0]?.chat['messages']).toEqual([
      { role: 'system', content: 'You are a weather bot.' },
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '18°C' },
      { role: 'assistant', content: 'It is 18°C in Paris.' },
      { role: 'user', content: [{ type: 'text', text: 'And Rome?' }] },
    ]);
    expect(gateway.calls[0]?.chat['tools']).toEqual([
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Current weather in a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
          strict: false,
        },
      },
    ]);
  });

  it('streams text, a tool call, the finish reason and usage from the converted events', async () => {
    const gateway = fakeGateway([{ chunks: TOOL_STREAM }]);
    const openai = createOpenAI({ apiKey: 'sk-test', baseURL: 'http://gateway.test/v1', fetch: gateway.fetch });
    const errors: unknown[] = [];
    const result = streamText({
      model: openai('chat'),
      prompt: 'Weather in Paris?',
      tools: { get_weather: weatherTool },
      maxRetries: 0,
      onError: ({ error }) => void errors.push(error),
    });
    let text = '';
    for await (const delta of result.textStream) text += delta;
    expect(errors).toEqual([]);
    expect(text).toBe('Let me look.');
    expect(await result.toolCalls).toMatchObject([{ toolCallId: 'call_1', toolName: 'get_weather', input: { city: 'Paris' } }]);
    expect(await result.finishReason).toBe('tool-calls');
    expect(await result.usage).toMatchObject({ inputTokens: 20, outputTokens: 7, totalTokens: 27 });
  });
});
