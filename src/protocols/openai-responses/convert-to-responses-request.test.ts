import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/index.js';
import type { ChatRequestBody } from '../openai-chat/chat-types.js';
import { toResponsesRequest } from './convert-to-responses-request.js';

const WEATHER_PARAMETERS = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };

function chat(fields: Record<string, unknown>): ChatRequestBody {
  return { model: 'gpt-5.1-codex', messages: [{ role: 'user', content: 'Hi' }], ...fields };
}

function refusal(body: ChatRequestBody): GatewayError {
  try {
    toResponsesRequest(body, { upstreamModel: 'gpt-5.1-codex' });
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected the request to be refused');
}

describe('toResponsesRequest', () => {
  it('converts a multi-turn conversation with tools, in order, and drops what the backend refuses', () => {
    const body: ChatRequestBody = {
      model: 'codex-chat',
      messages: [
        { role: 'system', content: 'You are terse.' },
        {
          role: 'developer',
          content: [
            { type: 'text', text: 'Answer in English.' },
            { type: 'text', text: 'Use tools.' },
          ],
        },
        { role: 'user', content: 'Weather in Paris and Oslo?', name: 'ada' },
        {
          role: 'assistant',
          content: 'Checking both.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '18°C, sunny' },
        {
          role: 'tool',
          tool_call_id: 'call_2',
          content: [
            { type: 'text', text: '4°C, ' },
            { type: 'text', text: 'snow' },
          ],
        },
        { role: 'assistant', content: 'Paris: 18°C and sunny. Oslo: 4°C and snow.', refusal: null },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'And this place?' },
            { type: 'image_url', image_url: { url: 'https://example.com/street.jpg', detail: 'high' } },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          ],
        },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_3', type: 'function', function: { name: 'locate_image', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_3', content: 'Lisbon' },
      ],
      tools: [
        { type: 'function', function: { name: 'get_weather', description: 'Current weather of a city', parameters: WEATHER_PARAMETERS, strict: true } },
        { type: 'function', function: { name: 'locate_image' } },
      ],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
      reasoning_effort: 'high',
      verbosity: 'low',
      response_format: { type: 'json_schema', json_schema: { name: 'weather', schema: WEATHER_PARAMETERS, strict: true } },
      temperature: 0.2,
      top_p: 0.9,
      max_tokens: 100,
      max_completion_tokens: 200,
      presence_penalty: 0.5,
      frequency_penalty: 0.5,
      seed: 7,
      user: 'user-1',
      store: true,
      stream: true,
      stream_options: { include_usage: true },
      n: 1,
      logprobs: false,
    };

    expect(toResponsesRequest(body, { upstreamModel: 'gpt-5.1-codex', promptCacheKey: 'session-9' })).toEqual({
      model: 'gpt-5.1-codex',
      instructions: '',
      input: [
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'You are terse.' }] },
        {
          type: 'message',
          role: 'developer',
          content: [
            { type: 'input_text', text: 'Answer in English.' },
            { type: 'input_text', text: 'Use tools.' },
          ],
        },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Weather in Paris and Oslo?' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking both.' }] },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call', call_id: 'call_2', name: 'get_weather', arguments: '{"city":"Oslo"}' },
        { type: 'function_call_output', call_id: 'call_1', output: '18°C, sunny' },
        { type: 'function_call_output', call_id: 'call_2', output: '4°C, snow' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Paris: 18°C and sunny. Oslo: 4°C and snow.' }] },
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'And this place?' },
            { type: 'input_image', image_url: 'https://example.com/street.jpg', detail: 'high' },
            { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' },
          ],
        },
        // No empty assistant message before its function call.
        { type: 'function_call', call_id: 'call_3', name: 'locate_image', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_3', output: 'Lisbon' },
      ],
      tools: [
        { type: 'function', name: 'get_weather', description: 'Current weather of a city', parameters: WEATHER_PARAMETERS, strict: true },
        { type: 'function', name: 'locate_image', parameters: { type: 'object', properties: {} }, strict: false },
      ],
      tool_choice: { type: 'function', name: 'get_weather' },
      parallel_tool_calls: false,
      reasoning: { effort: 'high' },
      text: { format: { type: 'json_schema', name: 'weather', schema: WEATHER_PARAMETERS, strict: true }, verbosity: 'low' },
      stream: true,
      store: false,
      prompt_cache_key: 'session-9',
    });
  });

  it('sends the minimum the backend requires for a plain question', () => {
    expect(toResponsesRequest(chat({}), { upstreamModel: 'gpt-5' })).toEqual({
      model: 'gpt-5',
      instructions: '',
      input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] }],
      stream: true,
      store: false,
    });
  });

  it('maps tool_choice and response_format shapes', () => {
    for (const choice of ['auto', 'none', 'required'] as const) {
      expect(toResponsesRequest(chat({ tool_choice: choice }), { upstreamModel: 'm' }).tool_choice).toBe(choice);
    }
    expect(toResponsesRequest(chat({ response_format: { type: 'json_object' } }), { upstreamModel: 'm' }).text).toEqual({ format: { type: 'json_object' } });
    expect(toResponsesRequest(chat({ response_format: { type: 'text' } }), { upstreamModel: 'm' }).text).toEqual({ format: { type: 'text' } });
    expect(
      toResponsesRequest(chat({ response_format: { type: 'json_schema', json_schema: { name: 'x', description: 'An x', schema: { type: 'object' } } } }), {
        upstreamModel: 'm',
      }).text,
    ).toEqual({
      format: { type: 'json_schema', name: 'x', description: 'An x', schema: { type: 'object' }, strict: false },
    });
  });

  it("uses the caller's prompt_cache_key when the adapter gives none", () => {
    expect(toResponsesRequest(chat({ prompt_cache_key: 'mine' }), { upstreamModel: 'm' }).prompt_cache_key).toBe('mine');
    expect(toResponsesRequest(chat({ prompt_cache_key: 'mine' }), { upstreamModel: 'm', promptCacheKey: 'session' }).prompt_cache_key).toBe('session');
  });

  it('takes a refusal the model gave earlier as its words', () => {
    const body = chat({
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: null, refusal: 'I cannot help with that.' },
        { role: 'assistant', content: [{ type: 'refusal', refusal: 'Nor that.' }] },
      ],
    });
    expect(toResponsesRequest(body, { upstreamModel: 'm' }).input.slice(1)).toEqual([
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'I cannot help with that.' }] },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Nor that.' }] },
    ]);
  });

  it('accepts the neutral values of fields it cannot serve', () => {
    expect(() =>
      toResponsesRequest(chat({ n: 1, logprobs: false, top_logprobs: 0, stop: null, audio: null, modalities: ['text'], logit_bias: {}, functions: [] }), {
        upstreamModel: 'm',
      }),
    ).not.toThrow();
    expect(() => toResponsesRequest(chat({ stop: [] }), { upstreamModel: 'm' })).not.toThrow();
  });

  it('refuses, naming the field, what the backend cannot do', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ n: 2 }, 'n'],
      [{ logprobs: true }, 'logprobs'],
      [{ top_logprobs: 3 }, 'top_logprobs'],
      [{ audio: { voice: 'alloy', format: 'mp3' } }, 'audio'],
      [{ modalities: ['text', 'audio'] }, 'modalities'],
      [{ stop: 'END' }, 'stop'],
      [{ stop: ['a', 'b'] }, 'stop'],
      [{ logit_bias: { '50256': -100 } }, 'logit_bias'],
      [{ prediction: { type: 'content', content: 'x' } }, 'prediction'],
      [{ web_search_options: {} }, 'web_search_options'],
      [{ functions: [{ name: 'f' }] }, 'functions'],
      [{ function_call: 'auto' }, 'function_call'],
      [{ tools: [{ type: 'custom', custom: { name: 'grammar' } }] }, 'tools[0]'],
      [{ tool_choice: { type: 'allowed_tools', allowed_tools: {} } }, 'tool_choice'],
      [{ response_format: { type: 'grammar' } }, 'response_format'],
      [{ messages: [{ role: 'function', name: 'f', content: '1' }] }, 'messages[0].role'],
      [{ messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAA', format: 'wav' } }] }] }, 'messages[0].content[0].type'],
      [{ messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-1' } }] }] }, 'messages[0].content[0].type'],
      [{ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: {} }] }] }, 'messages[0].content[0].image_url.url'],
      [{ messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }] }, 'messages[0].content[0].type'],
      [{ messages: [{ role: 'assistant', content: null, audio: { id: 'audio_1' } }] }, 'messages[0].audio'],
      [
        { messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'custom', custom: { name: 'g', input: 'x' } }] }] },
        'messages[0].tool_calls[0].type',
      ],
      [
        { messages: [{ role: 'tool', tool_call_id: 'c', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }] },
        'messages[0].content[0].type',
      ],
    ];
    for (const [fields, param] of cases) {
      const error = refusal(chat(fields));
      expect({ code: error.code, status: error.status, param: error.param }, JSON.stringify(fields)).toEqual({
        code: 'upstream_bad_request',
        status: 400,
        param,
      });
      expect(error.retryable).toBe(false);
    }
  });
});
