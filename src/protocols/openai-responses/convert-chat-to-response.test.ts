import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { chatCompletionToResponse, responseOutputItems, turnItems } from './convert-chat-to-response.js';
import { ChatToolNames } from './chat-tool-names.js';
import { convertChatUsage } from './convert-chat-usage.js';
import { responsesToChat } from './convert-responses-to-chat.js';
import { responsesSchemaErrors } from './openai-responses-schema-contract.js';
import type { ResponseContext } from './response-object.js';
import type { ResponsesRequest } from './responses-types.js';

function fixture(name: string): unknown {
  return JSON.parse(readFileSync(new URL(`../../../test/fixtures/openai/${name}`, import.meta.url), 'utf8')) as unknown;
}

function counterIds(): ResponseContext['newId'] {
  let next = 0;
  return (prefix) => `${prefix}_${++next}`;
}

function context(request: ResponseContext['request'] = {}): ResponseContext {
  return { id: 'resp_test', createdAt: 1_753_343_279, model: 'chat', request, newId: counterIds(), now: () => 1_753_343_280 };
}

function completion(message: Record<string, unknown>, finishReason = 'stop', usage?: Record<string, unknown>): unknown {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'upstream-model',
    choices: [{ index: 0, message: { role: 'assistant', ...message }, logprobs: null, finish_reason: finishReason }],
    ...(usage === undefined ? {} : { usage }),
  };
}

describe('chatCompletionToResponse', () => {
  it('answers a recorded text completion with one completed message and its usage, in the published schema', () => {
    const response = chatCompletionToResponse(fixture('chat-completion.json'), context());
    expect(responsesSchemaErrors('Response', response)).toEqual([]);
    expect(response).toEqual({
      id: 'resp_test',
      object: 'response',
      created_at: 1_753_343_279,
      status: 'completed',
      completed_at: 1_753_343_280,
      error: null,
      incomplete_details: null,
      instructions: null,
      max_output_tokens: null,
      max_tool_calls: null,
      model: 'chat',
      output: [
        {
          type: 'message',
          id: 'msg_1',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Hello! How can I assist you today?', annotations: [], logprobs: [] }],
        },
      ],
      parallel_tool_calls: true,
      previous_response_id: null,
      reasoning: { effort: null, summary: null },
      store: true,
      temperature: null,
      text: { format: { type: 'text' } },
      tool_choice: 'auto',
      tools: [],
      top_p: null,
      truncation: 'disabled',
      usage: {
        input_tokens: 8,
        input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
        output_tokens: 9,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 17,
      },
      metadata: {},
      background: false,
      safety_identifier: null,
      prompt_cache_key: null,
    });
    expect(response).not.toHaveProperty('output_text');
  });

  it('answers a recorded tool call with a function_call item keeping the upstream call id', () => {
    const response = chatCompletionToResponse(fixture('chat-completion-tool-call.json'), context());
    expect(responsesSchemaErrors('Response', response)).toEqual([]);
    expect(response.output).toEqual([
      {
        type: 'function_call',
        id: 'fc_1',
        call_id: 'call_KjzAbhiZC6nk81tQzL7pwlpc',
        name: 'read_file',
        arguments: '{"path":"README.md"}',
        status: 'completed',
      },
    ]);
    expect(response.service_tier).toBe('default');
  });

  it("answers a call of a namespace's function with its name and namespace, as OpenAI does, and stores it so", () => {
    const tools = [
      { type: 'function' as const, name: 'exec_command', parameters: { type: 'object' } },
      { type: 'namespace', name: 'multi_agent_v1', description: 'Agents.', tools: [{ type: 'function', name: 'spawn_agent', parameters: { type: 'object' } }] },
    ];
    const names = ChatToolNames.of(tools);
    const chatName =
      (responsesToChat({ model: 'm', input: 'x', tools }, [], names).body['tools'] as Array<{ function: { name: string } }>)[1]?.function.name ?? '';
    const response = chatCompletionToResponse(
      completion(
        {
          content: null,
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: chatName, arguments: '{"message":"hi"}' } },
            { id: 'call_b', type: 'function', function: { name: 'exec_command', arguments: '{"cmd":"ls"}' } },
          ],
        },
        'tool_calls',
      ),
      { ...context({ tools }), toolName: (name) => names.qualified(name) },
    );
    expect(responsesSchemaErrors('Response', response)).toEqual([]);
    expect(response.output).toEqual([
      {
        type: 'function_call',
        id: 'fc_1',
        call_id: 'call_a',
        namespace: 'multi_agent_v1',
        name: 'spawn_agent',
        arguments: '{"message":"hi"}',
        status: 'completed',
      },
      { type: 'function_call', id: 'fc_2', call_id: 'call_b', name: 'exec_command', arguments: '{"cmd":"ls"}', status: 'completed' },
    ]);
    expect(responseOutputItems(response)[0]).toEqual({
      type: 'function_call',
      id: 'fc_1',
      call_id: 'call_a',
      namespace: 'multi_agent_v1',
      name: 'spawn_agent',
      arguments: '{"message":"hi"}',
      status: 'completed',
    });
  });

  it('puts the text first, then one function_call per tool call, naming calls the upstream left unnamed', () => {
    const response = chatCompletionToResponse(
      completion(
        {
          content: 'Checking both.',
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: '', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
          ],
        },
        'tool_calls',
      ),
      context(),
    );
    expect(responsesSchemaErrors('Response', response)).toEqual([]);
    expect(response.output.map((item) => [item.type, item.id, item.type === 'function_call' ? item.call_id : ''])).toEqual([
      ['message', 'msg_1', ''],
      ['function_call', 'fc_2', 'call_a'],
      ['function_call', 'fc_3', 'call_4'],
    ]);
  });

  it.each([
    ['length', 'max_output_tokens'],
    ['content_filter', 'content_filter'],
  ])('makes finish_reason %s an incomplete response (%s) whose last item is incomplete', (finishReason, reason) => {
    const response = chatCompletionToResponse(completion({ content: 'The story beg' }, finishReason), context({ max_output_tokens: 16 }));
    expect(responsesSchemaErrors('Response', response)).toEqual([]);
    expect(response.status).toBe('incomplete');
    expect(response.completed_at).toBeNull();
    expect(response.incomplete_details).toEqual({ reason });
    expect(response.output[0]?.status).toBe('incomplete');
    expect(response.max_output_tokens).toBe(16);
  });

  it('keeps a refusal as a refusal part, and answers an empty completion with no output and no usage', () => {
    const refused = chatCompletionToResponse(completion({ content: null, refusal: "I can't help with that." }), context());
    expect(responsesSchemaErrors('Response', refused)).toEqual([]);
    expect(refused.output).toEqual([
      { type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'refusal', refusal: "I can't help with that." }] },
    ]);
    const empty = chatCompletionToResponse(completion({ content: '' }), context());
    expect(responsesSchemaErrors('Response', empty)).toEqual([]);
    expect(empty.output).toEqual([]);
    expect(empty).not.toHaveProperty('usage');
  });

  it('reports cached and reasoning tokens, for the response and for the request record', () => {
    const usage = {
      prompt_tokens: 1200,
      completion_tokens: 300,
      total_tokens: 1500,
      prompt_tokens_details: { cached_tokens: 1024 },
      completion_tokens_details: { reasoning_tokens: 120 },
    };
    const response = chatCompletionToResponse(completion({ content: 'Done.' }, 'stop', usage), context());
    expect(response.usage).toEqual({
      input_tokens: 1200,
      input_tokens_details: { cached_tokens: 1024, cache_write_tokens: 0 },
      output_tokens: 300,
      output_tokens_details: { reasoning_tokens: 120 },
      total_tokens: 1500,
    });
    expect(convertChatUsage(usage)?.usage).toEqual({ promptTokens: 1200, completionTokens: 300, totalTokens: 1500, cachedTokens: 1024, reasoningTokens: 120 });
    expect(convertChatUsage(undefined)).toBeNull();
  });

  it('echoes the request fields OpenAI echoes, in the published schema', () => {
    const request: ResponsesRequest = {
      model: 'chat',
      input: 'Weather?',
      instructions: 'Be brief.',
      tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} } }],
      tool_choice: 'required',
      temperature: 0.3,
      top_p: 0.8,
      max_output_tokens: 500,
      text: { format: { type: 'json_schema', name: 'w', schema: { type: 'object' }, strict: true }, verbosity: 'low' },
      reasoning: { effort: 'high', summary: 'auto' },
      parallel_tool_calls: false,
      previous_response_id: 'resp_previous',
      metadata: { team: 'search' },
      store: false,
      user: 'user-1',
    };
    const response = chatCompletionToResponse(completion({ content: '{}' }), context(request));
    expect(responsesSchemaErrors('Response', response)).toEqual([]);
    expect(response).toMatchObject({
      instructions: 'Be brief.',
      tools: [{ type: 'function', name: 'get_weather', description: null, parameters: { type: 'object', properties: {} }, strict: null }],
      tool_choice: 'required',
      temperature: 0.3,
      top_p: 0.8,
      max_output_tokens: 500,
      text: request.text,
      reasoning: { effort: 'high', summary: 'auto' },
      parallel_tool_calls: false,
      previous_response_id: 'resp_previous',
      metadata: { team: 'search' },
      store: false,
      user: 'user-1',
    });
  });
});

describe('turnItems', () => {
  it('stores a turn as input items that the next request can continue from', () => {
    const firstRequest: ResponsesRequest = { model: 'chat', input: 'Weather in Paris?', instructions: 'Be brief.' };
    const first = chatCompletionToResponse(fixture('chat-completion-tool-call.json'), context(firstRequest));
    const history = turnItems(firstRequest, first);
    expect(history).toEqual([
      { type: 'message', role: 'user', content: 'Weather in Paris?' },
      {
        type: 'function_call',
        id: 'fc_1',
        call_id: 'call_KjzAbhiZC6nk81tQzL7pwlpc',
        name: 'read_file',
        arguments: '{"path":"README.md"}',
        status: 'completed',
      },
    ]);
    const next = responsesToChat(
      {
        model: 'chat',
        previous_response_id: first.id,
        input: [{ type: 'function_call_output', call_id: 'call_KjzAbhiZC6nk81tQzL7pwlpc', output: '# Switchyard' }],
      },
      history,
    );
    expect(next.body.messages).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_KjzAbhiZC6nk81tQzL7pwlpc', type: 'function', function: { name: 'read_file', arguments: '{"path":"README.md"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_KjzAbhiZC6nk81tQzL7pwlpc', content: '# Switchyard' },
    ]);
  });

  it('gives an answer message back as an assistant message item', () => {
    const response = chatCompletionToResponse(fixture('chat-completion.json'), context());
    expect(responseOutputItems(response)).toEqual([
      {
        type: 'message',
        id: 'msg_1',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'Hello! How can I assist you today?', annotations: [], logprobs: [] }],
      },
    ]);
  });
});
