import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { conformanceErrors } from '../../../test/support/openai-conformance.js';
import { convertGeminiResponse } from './convert-gemini-response.js';
import type { GeminiGenerateContentResponse } from './gemini-api.js';
import { mapGeminiFinishReason } from './map-gemini-finish-reason.js';
import { mapGeminiUsage } from './map-gemini-usage.js';

function fixture(name: string): GeminiGenerateContentResponse {
  return JSON.parse(readFileSync(new URL(`../../../test/fixtures/gemini/${name}`, import.meta.url), 'utf8')) as GeminiGenerateContentResponse;
}

describe('convertGeminiResponse', () => {
  it('turns a recorded text answer into a chat.completion, thinking tokens counted as output', () => {
    const { completion, outputs } = convertGeminiResponse(fixture('generate-content.json'), 'requested-model');
    expect(completion).toMatchObject({
      id: 'chatcmpl-Un6LacrVMcjUxs0PmJfWoQc',
      object: 'chat.completion',
      model: 'gemini-3-pro-preview',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: "There are **3** r's in strawberry.\n\nHere is the breakdown: st**r**awbe**rr**y.", refusal: null },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: { prompt_tokens: 9, completion_tokens: 28 + 244, total_tokens: 281, completion_tokens_details: { reasoning_tokens: 244 } },
    });
    expect(completion.choices[0]?.message.tool_calls).toBeUndefined();
    expect(outputs[0]?.text).toBe(completion.choices[0]?.message.content);
    expect(conformanceErrors('CreateChatCompletionResponse', completion)).toEqual([]);
  });

  it('turns a recorded function call into tool_calls with an id and JSON arguments', () => {
    const { completion } = convertGeminiResponse(fixture('generate-content-tool-call.json'), 'requested-model');
    const choice = completion.choices[0];
    expect(choice?.finish_reason).toBe('tool_calls');
    expect(choice?.message.content).toBeNull();
    expect(choice?.message.tool_calls).toEqual([
      { id: expect.stringMatching(/^call_[0-9a-f]{24}$/), type: 'function', function: { name: 'weather', arguments: '{"location":"San Francisco"}' } },
    ]);
    expect(completion.usage).toMatchObject({ prompt_tokens: 29, completion_tokens: 15 + 893, total_tokens: 937 });
    expect(conformanceErrors('CreateChatCompletionResponse', completion)).toEqual([]);
  });

  it('reports a blocked prompt as one empty choice finished by content_filter', () => {
    const { completion } = convertGeminiResponse(fixture('prompt-blocked.json'), 'requested-model');
    expect(completion.choices).toEqual([
      { index: 0, message: { role: 'assistant', content: null, refusal: null }, logprobs: null, finish_reason: 'content_filter' },
    ]);
    expect(completion.usage).toEqual({ prompt_tokens: 9, completion_tokens: 0, total_tokens: 9 });
    expect(conformanceErrors('CreateChatCompletionResponse', completion)).toEqual([]);
  });

  it('keeps candidates apart, leaves thought summaries out, and falls back to the requested model', () => {
    const { completion } = convertGeminiResponse(
      {
        candidates: [
          { content: { role: 'model', parts: [{ text: 'thinking…', thought: true }, { text: 'A' }] }, finishReason: 'STOP', index: 0 },
          { content: { role: 'model', parts: [{ text: 'B' }] }, finishReason: 'MAX_TOKENS', index: 1 },
        ],
      },
      'requested-model',
    );
    expect(completion.model).toBe('requested-model');
    expect(completion.choices.map((choice) => [choice.index, choice.message.content, choice.finish_reason])).toEqual([
      [0, 'A', 'stop'],
      [1, 'B', 'length'],
    ]);
    expect(completion).not.toHaveProperty('usage');
  });
});

describe('mapGeminiFinishReason', () => {
  it('maps Gemini reasons to OpenAI ones', () => {
    expect(mapGeminiFinishReason('STOP', false)).toBe('stop');
    expect(mapGeminiFinishReason('STOP', true)).toBe('tool_calls');
    expect(mapGeminiFinishReason('MAX_TOKENS', true)).toBe('length');
    for (const reason of ['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII'])
      expect(mapGeminiFinishReason(reason, false)).toBe('content_filter');
    expect(mapGeminiFinishReason('MALFORMED_FUNCTION_CALL', false)).toBe('stop');
    expect(mapGeminiFinishReason(undefined, false)).toBe('stop');
  });
});

describe('mapGeminiUsage', () => {
  it('counts tool-use prompt tokens as input and thoughts as output, matching the recorded total', () => {
    const event = readFileSync(new URL('../../../test/fixtures/gemini/stream-usage-only-event.sse', import.meta.url), 'utf8');
    const response = JSON.parse(event.replace(/^data: /, '')) as GeminiGenerateContentResponse;
    expect(mapGeminiUsage(response.usageMetadata)).toEqual({
      prompt_tokens: 12 + 65,
      completion_tokens: 71 + 89,
      total_tokens: 237,
      prompt_tokens_details: { cached_tokens: 4 },
      completion_tokens_details: { reasoning_tokens: 89 },
    });
    expect(mapGeminiUsage(null)).toBeNull();
    expect(mapGeminiUsage({})).toBeNull();
  });
});
