import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/index.js';
import { convertToGeminiRequest } from './convert-to-gemini-request.js';
import { SKIP_THOUGHT_SIGNATURE } from './convert-to-gemini-contents.js';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

function rejection(run: () => unknown): GatewayError {
  try {
    run();
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a GatewayError');
}

describe('convertToGeminiRequest', () => {
  it('turns a tool-using conversation into contents, a system instruction and tools', () => {
    const request = convertToGeminiRequest({
      model: 'gemini-2.5-flash',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in English.' }] },
        { role: 'user', content: 'What is the weather in Paris and Tokyo?' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'And look at this:' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Tokyo"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_a', content: '{"temperature":21}' },
        { role: 'tool', tool_call_id: 'call_b', content: 'rainy' },
        { role: 'assistant', content: 'Paris is 21°C; Tokyo is rainy.' },
        { role: 'user', content: 'Thanks' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Weather of a city',
            parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
          },
        },
      ],
      tool_choice: 'auto',
    });

    expect(request).toEqual({
      systemInstruction: { parts: [{ text: 'You are terse.' }, { text: 'Answer in English.' }] },
      contents: [
        {
          role: 'user',
          parts: [{ text: 'What is the weather in Paris and Tokyo?' }, { text: 'And look at this:' }, { inlineData: { mimeType: 'image/png', data: PNG } }],
        },
        {
          role: 'model',
          parts: [
            { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: SKIP_THOUGHT_SIGNATURE },
            { functionCall: { name: 'get_weather', args: { city: 'Tokyo' } } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { name: 'get_weather', response: { temperature: 21 } } },
            { functionResponse: { name: 'get_weather', response: { content: 'rainy' } } },
          ],
        },
        { role: 'model', parts: [{ text: 'Paris is 21°C; Tokyo is rainy.' }] },
        { role: 'user', parts: [{ text: 'Thanks' }] },
      ],
      tools: [
        {
          functionDeclarations: [
            {
              name: 'get_weather',
              description: 'Weather of a city',
              parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
            },
          ],
        },
      ],
      toolConfig: { functionCallingConfig: { mode: 'AUTO' } },
    });
  });

  it('maps sampling options into generationConfig and leaves the model out of the body', () => {
    const request = convertToGeminiRequest({
      model: 'gemini-2.5-flash',
      messages: [{ role: 'user', content: 'Hi' }],
      temperature: 0.3,
      top_p: 0.9,
      max_tokens: 50,
      max_completion_tokens: 60,
      stop: 'END',
      n: 2,
      seed: 7,
      presence_penalty: 0.5,
      frequency_penalty: 0.25,
      response_format: { type: 'json_object' },
      user: 'someone',
      stream_options: { include_usage: true },
    });
    expect(request).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
      generationConfig: {
        temperature: 0.3,
        topP: 0.9,
        maxOutputTokens: 60,
        stopSequences: ['END'],
        candidateCount: 2,
        seed: 7,
        presencePenalty: 0.5,
        frequencyPenalty: 0.25,
        responseMimeType: 'application/json',
      },
    });
    expect(convertToGeminiRequest({ model: 'm', messages: [], stop: ['a', 'b'], max_tokens: 5 }).generationConfig).toEqual({
      stopSequences: ['a', 'b'],
      maxOutputTokens: 5,
    });
    const schema = { type: 'object', properties: { answer: { type: 'string' } } };
    expect(
      convertToGeminiRequest({ model: 'm', messages: [], response_format: { type: 'json_schema', json_schema: { name: 'a', schema } } }).generationConfig,
    ).toEqual({
      responseMimeType: 'application/json',
      responseJsonSchema: schema,
    });
  });

  it('maps every tool_choice form', () => {
    const base = { model: 'm', messages: [], tools: [{ type: 'function', function: { name: 'f' } }] };
    expect(convertToGeminiRequest({ ...base, tool_choice: 'none' }).toolConfig).toEqual({ functionCallingConfig: { mode: 'NONE' } });
    expect(convertToGeminiRequest({ ...base, tool_choice: 'required' }).toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    expect(convertToGeminiRequest({ ...base, tool_choice: { type: 'function', function: { name: 'f' } } }).toolConfig).toEqual({
      functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['f'] },
    });
    expect(convertToGeminiRequest(base).tools).toEqual([{ functionDeclarations: [{ name: 'f' }] }]);
    expect(convertToGeminiRequest(base).toolConfig).toBeUndefined();
  });

  it('refuses what Gemini cannot take, naming the field', () => {
    const remoteImage = rejection(() =>
      convertToGeminiRequest({ model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }] }),
    );
    expect(remoteImage).toMatchObject({ code: 'upstream_bad_request', status: 400, param: 'messages[0].content[0].image_url.url' });

    const orphanTool = rejection(() => convertToGeminiRequest({ model: 'm', messages: [{ role: 'tool', tool_call_id: 'call_x', content: 'x' }] }));
    expect(orphanTool).toMatchObject({ code: 'upstream_bad_request', param: 'messages[0].tool_call_id' });

    const badArguments = rejection(() =>
      convertToGeminiRequest({
        model: 'm',
        messages: [{ role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{oops' } }] }],
      }),
    );
    expect(badArguments).toMatchObject({ code: 'upstream_bad_request', param: 'messages[0].tool_calls[0].function.arguments' });
  });

  it('takes audio and files inline, and skips empty turns', () => {
    const request = convertToGeminiRequest({
      model: 'm',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
            { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' } },
          ],
        },
        { role: 'assistant', content: '' },
        { role: 'user', content: '' },
      ],
    });
    expect(request.contents).toEqual([
      { role: 'user', parts: [{ inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } }, { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } }] },
    ]);
  });
});
