import { describe, expect, it } from 'vitest';
import { conformanceErrors } from '../../../test/support/openai-conformance.js';
import { GatewayError } from '../../errors/index.js';
import type { ChatStreamEvent } from '../provider-adapter.js';
import type { ChatCompletionPayload } from '../../protocols/openai-chat/chat-types.js';
import { collectChatCompletion } from '../../protocols/openai-responses/collect-chat-completion.js';
import { readResponsesAsChatStream } from './codex-chat-stream.js';

const CREATED = 1_788_000_000;

type Event = Record<string, unknown> & { type: string };

function response(status: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { id: 'resp_42', object: 'response', created_at: 1_787_659_560, status, model: 'gpt-5.1-codex', output: [], error: null, usage: null, ...extra };
}

const USAGE = {
  input_tokens: 45,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 25,
  output_tokens_details: { reasoning_tokens: 8 },
  total_tokens: 70,
};

/** The backend's stream, one byte at a time, read by the stream converter: what the adapter collects. */
async function* upstream(events: readonly Event[]): AsyncGenerator<Buffer> {
  const bytes = Buffer.from(events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join(''));
  for (let offset = 0; offset < bytes.length; offset++) yield bytes.subarray(offset, offset + 1);
}

function chatStream(events: readonly Event[]): AsyncIterable<ChatStreamEvent> {
  return readResponsesAsChatStream(upstream(events), { upstreamId: 'chatgpt-1', model: 'gpt-5.1-codex', created: CREATED });
}

function text(itemId: string, outputIndex: number, pieces: readonly string[]): Event[] {
  return pieces.map((delta) => ({ type: 'response.output_text.delta', item_id: itemId, output_index: outputIndex, content_index: 0, delta }));
}

function functionCall(itemId: string, outputIndex: number, callId: string, name: string, argumentPieces: readonly string[]): Event[] {
  return [
    { type: 'response.output_item.added', item: { id: itemId, type: 'function_call', arguments: '', call_id: callId, name }, output_index: outputIndex },
    ...argumentPieces.map((delta): Event => ({ type: 'response.function_call_arguments.delta', item_id: itemId, output_index: outputIndex, delta })),
    {
      type: 'response.output_item.done',
      item: { id: itemId, type: 'function_call', arguments: argumentPieces.join(''), call_id: callId, name },
      output_index: outputIndex,
    },
  ];
}

const created: Event = { type: 'response.created', response: response('in_progress') };

function parse(payload: Uint8Array): ChatCompletionPayload {
  return JSON.parse(Buffer.from(payload).toString('utf8')) as ChatCompletionPayload;
}

describe('collectChatCompletion', () => {
  it('assembles a text answer into a chat.completion that matches OpenAI schema', async () => {
    const result = await collectChatCompletion(
      chatStream([
        created,
        ...text('msg_1', 0, ['Hello', ', ', 'wörld 🌍']),
        { type: 'response.completed', response: response('completed', { usage: USAGE }) },
      ]),
    );
    const payload = parse(result.payload);
    expect(conformanceErrors('CreateChatCompletionResponse', payload)).toEqual([]);
    expect(payload).toEqual({
      id: 'chatcmpl-resp_42',
      object: 'chat.completion',
      created: CREATED,
      model: 'gpt-5.1-codex',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello, wörld 🌍', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: {
        prompt_tokens: 45,
        completion_tokens: 25,
        total_tokens: 70,
        prompt_tokens_details: { cached_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 8 },
      },
    });
    expect(result.usage).toEqual({ promptTokens: 45, completionTokens: 25, totalTokens: 70, cachedTokens: 0, reasoningTokens: 8 });
    expect(result.completionText()).toBe('Hello, wörld 🌍');
  });

  it('assembles text and parallel tool calls, in order, with finish_reason tool_calls', async () => {
    const result = await collectChatCompletion(
      chatStream([
        created,
        ...text('msg_1', 0, ['Checking ', 'both.']),
        ...functionCall('fc_1', 1, 'call_paris', 'get_weather', ['{"city":', '"Paris"}']),
        ...functionCall('fc_2', 2, 'call_oslo', 'get_weather', ['{"city":"Oslo"}']),
        { type: 'response.completed', response: response('completed', { usage: USAGE }) },
      ]),
    );
    const payload = parse(result.payload);
    expect(conformanceErrors('CreateChatCompletionResponse', payload)).toEqual([]);
    expect(payload.choices).toEqual([
      {
        index: 0,
        message: {
          role: 'assistant',
          content: 'Checking both.',
          refusal: null,
          tool_calls: [
            { id: 'call_paris', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_oslo', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
          ],
        },
        logprobs: null,
        finish_reason: 'tool_calls',
      },
    ]);
    expect(result.completionText()).toBe('Checking both.get_weather{"city":"Paris"}get_weather{"city":"Oslo"}');
  });

  it('answers null content for tool calls alone, and no usage when the upstream gave none', async () => {
    const result = await collectChatCompletion(
      chatStream([created, ...functionCall('fc_1', 0, 'call_1', 'now', ['{}']), { type: 'response.completed', response: response('completed') }]),
    );
    const payload = parse(result.payload);
    expect(conformanceErrors('CreateChatCompletionResponse', payload)).toEqual([]);
    expect(payload.choices[0]?.message.content).toBeNull();
    expect(payload.usage).toBeUndefined();
    expect(result.usage).toBeNull();
  });

  it('keeps a refusal apart from the content', async () => {
    const result = await collectChatCompletion(
      chatStream([
        created,
        { type: 'response.refusal.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'I cannot help with that.' },
        { type: 'response.completed', response: response('completed') },
      ]),
    );
    const payload = parse(result.payload);
    expect(conformanceErrors('CreateChatCompletionResponse', payload)).toEqual([]);
    expect(payload.choices[0]?.message).toEqual({ role: 'assistant', content: null, refusal: 'I cannot help with that.' });
  });

  it('answers length for an answer cut at the output limit', async () => {
    const result = await collectChatCompletion(
      chatStream([
        created,
        ...text('msg_1', 0, ['Once upon']),
        { type: 'response.incomplete', response: response('incomplete', { incomplete_details: { reason: 'max_output_tokens' }, usage: USAGE }) },
      ]),
    );
    expect(parse(result.payload).choices[0]?.finish_reason).toBe('length');
  });

  it('rejects with the classified failure when the stream fails', async () => {
    const failed: Event = {
      type: 'response.failed',
      response: response('failed', { error: { code: 'rate_limit_exceeded', message: 'Please try again in 20s.' } }),
    };
    const rejection = collectChatCompletion(chatStream([created, ...text('msg_1', 0, ['Hel']), failed]));
    await expect(rejection).rejects.toBeInstanceOf(GatewayError);
    await expect(rejection).rejects.toMatchObject({ code: 'upstream_rate_limited', retryAfterSeconds: 20 });
  });

  it('refuses chunks that never finished the completion', async () => {
    async function* unfinished(): AsyncGenerator<ChatStreamEvent> {
      yield {
        data: JSON.stringify({
          id: 'chatcmpl-1',
          object: 'chat.completion.chunk',
          created: CREATED,
          model: 'm',
          choices: [{ index: 0, delta: { content: 'x' }, logprobs: null, finish_reason: null }],
        }),
        usage: null,
        usageOnly: false,
        text: 'x',
      };
    }
    await expect(collectChatCompletion(unfinished())).rejects.toMatchObject({ code: 'upstream_invalid_response' });
  });
});
