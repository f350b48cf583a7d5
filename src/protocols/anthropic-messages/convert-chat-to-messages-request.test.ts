import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/index.js';
import type { ChatRequestBody } from '../openai-chat/chat-types.js';
import { convertToAnthropicRequest } from './convert-chat-to-messages-request.js';

const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

function body(fields: Partial<ChatRequestBody> & Record<string, unknown>): ChatRequestBody {
  return { model: 'claude-sonnet-4-20250514', messages: [{ role: 'user', content: 'Hi' }], ...fields };
}

function convertError(fields: Record<string, unknown>): GatewayError {
  try {
    convertToAnthropicRequest(body(fields), { stream: false });
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected the conversion to fail');
}

describe('convertToAnthropicRequest', () => {
  it('sends a plain conversation with the required max_tokens defaulted to 4096', () => {
    expect(convertToAnthropicRequest(body({}), { stream: false })).toEqual({
      model: 'claude-sonnet-4-20250514',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
      max_tokens: 4096,
    });
  });

  it('moves system and developer messages, in order, to the top-level system prompt', () => {
    const request = convertToAnthropicRequest(
      body({
        messages: [
          { role: 'system', content: 'You are terse.' },
          {
            role: 'developer',
            content: [
              { type: 'text', text: 'Answer in ' },
              { type: 'text', text: 'French.' },
            ],
          },
          { role: 'user', content: 'Hello' },
        ],
      }),
      { stream: false },
    );
    expect(request.system).toBe('You are terse.\n\nAnswer in French.');
    expect(request.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }]);
  });

  it('merges consecutive messages of one role, since Anthropic requires alternation', () => {
    const request = convertToAnthropicRequest(
      body({
        messages: [
          { role: 'user', content: 'First.' },
          { role: 'user', content: [{ type: 'text', text: 'Second.' }] },
          { role: 'assistant', content: 'One.' },
          { role: 'assistant', content: 'Two.' },
        ],
      }),
      { stream: false },
    );
    expect(request.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'First.' },
          { type: 'text', text: 'Second.' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'One.' },
          { type: 'text', text: 'Two.' },
        ],
      },
    ]);
  });

  it('converts image parts: data: URLs to base64 sources, http(s) URLs to url sources', () => {
    const request = convertToAnthropicRequest(
      body({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Compare these.' },
              { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}`, detail: 'low' } },
              { type: 'image_url', image_url: { url: 'https://upload.wikimedia.org/wikipedia/commons/a/a7/Camponotus_flavomarginatus_ant.jpg' } },
            ],
          },
        ],
      }),
      { stream: false },
    );
    expect(request.messages[0]?.content).toEqual([
      { type: 'text', text: 'Compare these.' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } },
      { type: 'image', source: { type: 'url', url: 'https://upload.wikimedia.org/wikipedia/commons/a/a7/Camponotus_flavomarginatus_ant.jpg' } },
    ]);
  });

  it('turns assistant tool calls into tool_use blocks and tool messages into one user message of tool_result blocks', () => {
    const request = convertToAnthropicRequest(
      body({
        messages: [
          { role: 'user', content: 'Weather in Paris and Tokyo?' },
          {
            role: 'assistant',
            content: 'Checking both.',
            tool_calls: [
              { id: 'toolu_01A', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } },
              { id: 'toolu_01B', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Tokyo"}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'toolu_01A', content: '15 degrees' },
          { role: 'tool', tool_call_id: 'toolu_01B', content: [{ type: 'text', text: '22 degrees' }] },
          { role: 'user', content: 'Thanks!' },
        ],
      }),
      { stream: false },
    );
    expect(request.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Tokyo?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking both.' },
          { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { location: 'Paris' } },
          { type: 'tool_use', id: 'toolu_01B', name: 'get_weather', input: { location: 'Tokyo' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_01A', content: '15 degrees' },
          { type: 'tool_result', tool_use_id: 'toolu_01B', content: [{ type: 'text', text: '22 degrees' }] },
          { type: 'text', text: 'Thanks!' },
        ],
      },
    ]);
  });

  it('sends an assistant message of tool calls only (null content) without an empty text block', () => {
    const request = convertToAnthropicRequest(
      body({
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'noop', arguments: '' } }] },
        ],
      }),
      { stream: false },
    );
    expect(request.messages[1]).toEqual({ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'noop', input: {} }] });
  });

  it('converts tools and every tool_choice form', () => {
    const tools = [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Get the current weather in a given location',
          parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
        },
      },
      { type: 'function', function: { name: 'no_parameters' } },
    ];
    const request = convertToAnthropicRequest(body({ tools, tool_choice: 'required' }), { stream: false });
    expect(request.tools).toEqual([
      {
        name: 'get_weather',
        description: 'Get the current weather in a given location',
        input_schema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
      },
      { name: 'no_parameters', input_schema: { type: 'object', properties: {} } },
    ]);
    expect(request.tool_choice).toEqual({ type: 'any' });
    const choice = (toolChoice: unknown, extra: Record<string, unknown> = {}) =>
      convertToAnthropicRequest(body({ tools, tool_choice: toolChoice, ...extra }), { stream: false }).tool_choice;
    expect(choice('auto')).toEqual({ type: 'auto' });
    expect(choice('none')).toEqual({ type: 'none' });
    expect(choice({ type: 'function', function: { name: 'get_weather' } })).toEqual({ type: 'tool', name: 'get_weather' });
    expect(choice(undefined)).toBeUndefined();
    expect(choice('auto', { parallel_tool_calls: false })).toEqual({ type: 'auto', disable_parallel_tool_use: true });
    expect(choice(undefined, { parallel_tool_calls: false })).toEqual({ type: 'auto', disable_parallel_tool_use: true });
  });

  it('maps sampling parameters: max_completion_tokens first, temperature clamped to 1, stop to stop_sequences, user to metadata', () => {
    const request = convertToAnthropicRequest(
      body({ max_tokens: 100, max_completion_tokens: 200, temperature: 1.7, top_p: 0.9, stop: '\n\nHuman:', user: 'user-42', stream: true }),
      { stream: true },
    );
    expect(request).toMatchObject({
      max_tokens: 200,
      temperature: 1,
      top_p: 0.9,
      stop_sequences: ['\n\nHuman:'],
      stream: true,
      metadata: { user_id: 'user-42' },
    });
    const other = convertToAnthropicRequest(body({ max_tokens: 100, temperature: 0.3, stop: ['END', 'STOP'], n: 1, seed: 7 }), { stream: false });
    expect(other).toEqual({
      model: 'claude-sonnet-4-20250514',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
      max_tokens: 100,
      temperature: 0.3,
      stop_sequences: ['END', 'STOP'],
    });
  });

  it('refuses, as the caller’s mistake, what Anthropic cannot take', () => {
    expect(convertError({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://example.com/a.png' } }] }] })).toMatchObject({
      code: 'invalid_body',
      status: 400,
      param: 'messages[0].content[0].image_url.url',
    });
    expect(convertError({ messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: '', format: 'wav' } }] }] }).param).toBe(
      'messages[0].content[0]',
    );
    expect(
      convertError({
        messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{not json' } }] }],
      }).param,
    ).toBe('messages[0].tool_calls[0].function.arguments');
    expect(convertError({ messages: [{ role: 'function', name: 'f', content: 'x' }] }).param).toBe('messages[0].role');
    expect(convertError({ tools: [{ type: 'custom', custom: { name: 'x' } }] }).param).toBe('tools[0]');
  });
});
