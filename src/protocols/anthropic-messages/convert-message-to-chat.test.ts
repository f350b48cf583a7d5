import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { AnthropicMessageResponse } from './messages-types.js';
import { completionText, convertToOpenAICompletion } from './convert-message-to-chat.js';
import { mapAnthropicFinishReason } from './stop-reason.js';

function fixture(name: string): AnthropicMessageResponse {
  return JSON.parse(readFileSync(new URL(`../../../test/fixtures/anthropic/${name}`, import.meta.url), 'utf8')) as AnthropicMessageResponse;
}

const NOW = 1_750_000_000;

describe('convertToOpenAICompletion', () => {
  it('turns a recorded text message into a chat.completion with the message id, model and usage', () => {
    const message = fixture('message.json');
    const completion = convertToOpenAICompletion(message, NOW);
    expect(completion).toEqual({
      id: 'msg_01Pvyf26bY17RcjmWfJsXGBn',
      object: 'chat.completion',
      created: NOW,
      model: 'claude-sonnet-4-20250514',
      choices: [{ index: 0, message: { role: 'assistant', content: message.content?.[0]?.text, refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 18, completion_tokens: 254, total_tokens: 272, prompt_tokens_details: { cached_tokens: 0 } },
    });
    expect(completion.choices[0]?.message.content).toMatch(/^This is a famous philosophical question/);
  });

  it('turns a recorded tool_use message into tool_calls with JSON arguments and null content', () => {
    const completion = convertToOpenAICompletion(fixture('message-tool-use.json'), NOW);
    expect(completion.choices[0]).toEqual({
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        refusal: null,
        tool_calls: [{ id: 'toolu_01MhUGx2K4rTe9D6nZxtGURs', type: 'function', function: { name: 'getWeather', arguments: '{"location":"Tokyo"}' } }],
      },
      logprobs: null,
      finish_reason: 'tool_calls',
    });
    expect(completion.usage).toEqual({ prompt_tokens: 822, completion_tokens: 33, total_tokens: 855, prompt_tokens_details: { cached_tokens: 0 } });
    expect(completionText(completion)).toBe('getWeather{"location":"Tokyo"}');
  });

  it('counts cache writes and reads as prompt tokens, and reports the reads as cached', () => {
    const completion = convertToOpenAICompletion(
      { ...fixture('message.json'), usage: { input_tokens: 5, cache_creation_input_tokens: 100, cache_read_input_tokens: 23490, output_tokens: 84 } },
      NOW,
    );
    expect(completion.usage).toEqual({ prompt_tokens: 23595, completion_tokens: 84, total_tokens: 23679, prompt_tokens_details: { cached_tokens: 23490 } });
  });

  it('concatenates text blocks around tool calls and leaves out thinking blocks', () => {
    const completion = convertToOpenAICompletion(
      {
        id: 'msg_1',
        model: 'claude-sonnet-4-20250514',
        content: [
          { type: 'thinking', text: undefined },
          { type: 'text', text: 'Let me ' },
          { type: 'text', text: 'check.' },
          { type: 'tool_use', id: 'toolu_1', name: 'a', input: { x: 1 } },
          { type: 'tool_use', id: 'toolu_2', name: 'b', input: {} },
        ],
        stop_reason: 'tool_use',
        usage: null,
      },
      NOW,
    );
    expect(completion.choices[0]?.message.content).toBe('Let me check.');
    expect(completion.choices[0]?.message.tool_calls?.map((call) => [call.id, call.function.arguments])).toEqual([
      ['toolu_1', '{"x":1}'],
      ['toolu_2', '{}'],
    ]);
    expect(completion.usage).toBeUndefined();
  });
});

describe('mapAnthropicFinishReason', () => {
  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
    ['pause_turn', 'stop'],
    [null, 'stop'],
  ] as const)('%s → %s', (stopReason, finishReason) => {
    expect(mapAnthropicFinishReason(stopReason)).toBe(finishReason);
  });
});
