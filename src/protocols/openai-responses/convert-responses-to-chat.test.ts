import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/index.js';
import { ChatToolNames } from './chat-tool-names.js';
import { responsesToChat } from './convert-responses-to-chat.js';
import { responsesSchemaErrors } from './openai-responses-schema-contract.js';
import type { ResponseInputItem, ResponsesRequest } from './responses-types.js';

const WEATHER_TOOL = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Current weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
};

function request(fields: Partial<ResponsesRequest>): ResponsesRequest {
  return { model: 'claude-sonnet', input: 'Hi', ...fields };
}

/** The conversion's output must be a chat request OpenAI's own schema accepts. */
function convert(fields: Partial<ResponsesRequest>, history: ResponseInputItem[] = []): Record<string, unknown> {
  const { body } = responsesToChat(request(fields), history);
  expect(responsesSchemaErrors('CreateChatCompletionRequest', body)).toEqual([]);
  return body;
}

function refusal(fields: Record<string, unknown>, history: ResponseInputItem[] = []): GatewayError {
  try {
    responsesToChat(request(fields as Partial<ResponsesRequest>), history);
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected the conversion to be refused');
}

describe('responsesToChat', () => {
  it('turns instructions into a first system message and a string input into a user message', () => {
    expect(convert({ instructions: 'Be brief.', input: 'Hello' })).toEqual({
      model: 'claude-sonnet',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello' },
      ],
    });
  });

  it('maps the sampling, length, reasoning, format and streaming fields to their chat names', () => {
    const body = convert({
      temperature: 0.2,
      top_p: 0.9,
      max_output_tokens: 256,
      reasoning: { effort: 'low', summary: 'auto' },
      user: 'user-1234',
      safety_identifier: 'hashed-user',
      prompt_cache_key: 'conversation-7',
      text: {
        format: { type: 'json_schema', name: 'answer', schema: { type: 'object', properties: { a: { type: 'string' } } }, strict: true },
        verbosity: 'low',
      },
      stream: true,
      store: false,
      metadata: { session_id: 'abc' },
      previous_response_id: null,
      include: ['reasoning.encrypted_content'],
      truncation: 'disabled',
    });
    expect(body).toEqual({
      model: 'claude-sonnet',
      messages: [{ role: 'user', content: 'Hi' }],
      temperature: 0.2,
      top_p: 0.9,
      max_tokens: 256,
      reasoning_effort: 'low',
      user: 'user-1234',
      safety_identifier: 'hashed-user',
      prompt_cache_key: 'conversation-7',
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'answer', schema: { type: 'object', properties: { a: { type: 'string' } } }, strict: true },
      },
      verbosity: 'low',
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('maps json_object, and leaves the text format out when it is plain text', () => {
    expect(convert({ text: { format: { type: 'json_object' } } })['response_format']).toEqual({ type: 'json_object' });
    expect(convert({ text: { format: { type: 'text' } } })).not.toHaveProperty('response_format');
  });

  it('converts function tools, tool_choice and parallel_tool_calls, keeping strict only when given', () => {
    const loose = { type: 'function' as const, name: 'lookup', parameters: { type: 'object', properties: {} } };
    const body = convert({ tools: [WEATHER_TOOL, loose], tool_choice: { type: 'function', name: 'get_weather' }, parallel_tool_calls: false });
    expect(body['tools']).toEqual([
      { type: 'function', function: { name: 'get_weather', description: 'Current weather in a city', parameters: WEATHER_TOOL.parameters, strict: true } },
      { type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } },
    ]);
    expect(body['tool_choice']).toEqual({ type: 'function', function: { name: 'get_weather' } });
    expect(body['parallel_tool_calls']).toBe(false);
    expect(convert({ tools: [WEATHER_TOOL], tool_choice: 'required' })['tool_choice']).toBe('required');
  });

  it('sends no tool_choice or parallel_tool_calls without tools, which OpenAI chat refuses', () => {
    const body = convert({ tool_choice: 'auto', parallel_tool_calls: true, tools: [] });
    expect(body).not.toHaveProperty('tools');
    expect(body).not.toHaveProperty('tool_choice');
    expect(body).not.toHaveProperty('parallel_tool_calls');
  });

  it('offers only the allowed tools for an allowed_tools choice, with its mode', () => {
    const other = { ...WEATHER_TOOL, name: 'get_time' };
    const body = convert({
      tools: [WEATHER_TOOL, other],
      tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'get_time' }] },
    });
    expect((body['tools'] as Array<{ function: { name: string } }>).map((tool) => tool.function.name)).toEqual(['get_time']);
    expect(body['tool_choice']).toBe('required');
  });

  it('keeps developer and system messages in place as system messages, and converts user parts', () => {
    const body = convert({
      input: [
        { role: 'developer', content: 'Answer in French.' },
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is in this image?' },
            { type: 'input_image', image_url: 'https://example.com/cat.png', detail: 'low' },
            { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' },
          ],
        },
        {
          role: 'system',
          content: [
            { type: 'input_text', text: 'Use one ' },
            { type: 'input_text', text: 'sentence.' },
          ],
        },
      ],
    });
    expect(body['messages']).toEqual([
      { role: 'system', content: 'Answer in French.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in this image?' },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' } },
        ],
      },
      { role: 'system', content: 'Use one sentence.' },
    ]);
  });

  it('rebuilds a multi-turn tool conversation: history first, calls merged into the assistant turn, outputs as tool messages, reasoning dropped', () => {
    const history: ResponseInputItem[] = [
      { type: 'message', role: 'user', content: 'Weather in Paris and Rome?' },
      { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAA…' },
      { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Let me check.', annotations: [] }] },
      { type: 'function_call', id: 'fc_1', call_id: 'call_paris', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' },
      { type: 'function_call', id: 'fc_2', call_id: 'call_rome', name: 'get_weather', arguments: '{"city":"Rome"}', status: 'completed' },
    ];
    const body = convert(
      {
        instructions: 'You are a weather bot.',
        tools: [WEATHER_TOOL],
        input: [
          { type: 'function_call_output', call_id: 'call_paris', output: '18°C, sunny' },
          {
            type: 'function_call_output',
            call_id: 'call_rome',
            output: [
              { type: 'input_text', text: '24°C, ' },
              { type: 'input_text', text: 'clear' },
            ],
          },
        ],
      },
      history,
    );
    expect(body['messages']).toEqual([
      { role: 'system', content: 'You are a weather bot.' },
      { role: 'user', content: 'Weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: 'Let me check.',
        tool_calls: [
          { id: 'call_paris', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_rome', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_paris', content: '18°C, sunny' },
      { role: 'tool', tool_call_id: 'call_rome', content: '24°C, clear' },
    ]);
  });

  it('starts a new assistant message for calls that follow a tool result, and gives text said after calls to their turn', () => {
    const body = convert({
      input: [
        { role: 'user', content: 'Go' },
        { type: 'function_call', call_id: 'a', name: 'step', arguments: '{}' },
        { role: 'assistant', content: 'Working on it.' },
        { type: 'function_call_output', call_id: 'a', output: 'done' },
        { type: 'function_call', call_id: 'b', name: 'step', arguments: '{}' },
        { type: 'function_call_output', call_id: 'b', output: 'done' },
        { role: 'assistant', content: [{ type: 'output_text', text: 'Finished.' }] },
        { role: 'user', content: 'Thanks' },
      ],
    });
    expect(body['messages']).toEqual([
      { role: 'user', content: 'Go' },
      { role: 'assistant', content: 'Working on it.', tool_calls: [{ id: 'a', type: 'function', function: { name: 'step', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'a', content: 'done' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'b', type: 'function', function: { name: 'step', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'b', content: 'done' },
      { role: 'assistant', content: 'Finished.' },
      { role: 'user', content: 'Thanks' },
    ]);
  });

  it("leaves out an image detail chat does not know ('original')", () => {
    const body = convert({ input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://example.com/a.png', detail: 'original' }] }] });
    expect(body['messages']).toEqual([{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }]);
  });

  it('keeps an earlier refusal as the assistant text', () => {
    const body = convert({
      input: [
        { role: 'user', content: 'x' },
        { type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal: "I can't help with that." }] },
        { role: 'user', content: 'y' },
      ],
    });
    expect((body['messages'] as unknown[])[1]).toEqual({ role: 'assistant', content: "I can't help with that." });
  });

  it.each([
    [{ background: true }, 'background'],
    [{ conversation: 'conv_123' }, 'conversation'],
    [{ tools: [WEATHER_TOOL, { type: 'made_up_tool' }] }, 'tools[1].type'],
    [{ tools: [{ type: 'namespace', name: 'crm', description: 'CRM', tools: [{ type: 'file_search' }, { type: 'made_up_tool' }] }] }, 'tools[0].tools[1].type'],
    [{ tools: [{ type: 'namespace', description: 'CRM', tools: [WEATHER_TOOL] }] }, 'tools[0].name'],
    [{ tools: [{ type: 'namespace', name: 'crm', description: 'CRM', tools: [{ ...WEATHER_TOOL, defer_loading: true }] }] }, 'tools[0].tools[0].defer_loading'],
    [{ tools: [{ ...WEATHER_TOOL, defer_loading: true }] }, 'tools[0].defer_loading'],
    [{ tools: [WEATHER_TOOL], tool_choice: { type: 'web_search_preview' } }, 'tool_choice'],
    [{ tools: [WEATHER_TOOL, { type: 'image_generation' }], tool_choice: { type: 'image_generation' } }, 'tool_choice'],
    [{ tools: [{ type: 'web_search' }], tool_choice: 'required' }, 'tool_choice'],
    [
      { tools: [WEATHER_TOOL, { type: 'web_search' }], tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'web_search' }] } },
      'tool_choice',
    ],
    [
      {
        input: [
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'Summarise' },
              { type: 'input_file', file_id: 'file-1' },
            ],
          },
        ],
      },
      'input[0].content[1]',
    ],
    [{ input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file-1', detail: 'auto' }] }] }, 'input[0].content[0]'],
    [
      { input: [{ type: 'function_call_output', call_id: 'c', output: [{ type: 'input_image', image_url: 'https://example.com/a.png' }] }] },
      'input[0].output[0]',
    ],
    [{ input: [{ type: 'web_search_call', id: 'ws_1', status: 'completed' }] }, 'input[0].type'],
    [{ include: ['message.output_text.logprobs'] }, 'include[0]'],
    [{ truncation: 'auto' }, 'truncation'],
    [{ prompt: { id: 'pmpt_1' } }, 'prompt'],
    [{ text: { format: { type: 'grammar' } } }, 'text.format.type'],
    [{ input: [] }, 'input'],
  ])('refuses %j with a 400 naming %s', (fields, param) => {
    const error = refusal(fields);
    expect(error.status).toBe(400);
    expect(error.type).toBe('invalid_request_error');
    expect(error.param).toBe(param);
  });

  it('throws on an item reference left unresolved, in the input or in the history', () => {
    expect(refusal({ input: [{ type: 'item_reference', id: 'msg_1' }] }).param).toBe('input[0]');
    expect(refusal({ input: [{ id: 'msg_1' }] }).param).toBe('input[0]');
    expect(refusal({}, [{ type: 'item_reference', id: 'fc_9' }]).param).toBe('previous_response_id');
  });

  it("converts the request Codex CLI 0.171 sends: its namespace's functions become chat functions, web_search is left out and said", () => {
    const recorded = JSON.parse(
      readFileSync(new URL('../../../test/fixtures/codex-cli/responses-request-0.171.0.json', import.meta.url), 'utf8'),
    ) as ResponsesRequest;
    const { body, dropped } = responsesToChat(recorded, []);
    expect(responsesSchemaErrors('CreateChatCompletionRequest', body)).toEqual([]);
    const names = (body['tools'] as Array<{ function: { name: string; description?: string } }>).map((tool) => tool.function.name);
    expect(names).toEqual([
      'exec_command',
      'write_stdin',
      'request_user_input',
      'view_image',
      'multi_agent_v1__close_agent',
      'multi_agent_v1__resume_agent',
      'multi_agent_v1__send_input',
      'multi_agent_v1__spawn_agent',
      'multi_agent_v1__wait_agent',
      'get_goal',
      'create_goal',
      'update_goal',
    ]);
    for (const name of names) expect(name).toMatch(/^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/);
    const spawn = (body['tools'] as Array<{ function: { name: string; description?: string } }>)[7];
    expect(spawn?.function.description).toMatch(/^multi_agent_v1: Tools for spawning and managing sub-agents\.\n\n/);
    expect(dropped).toEqual([{ type: 'web_search', param: 'tools[8]' }]);
    expect(body['tool_choice']).toBe('auto');
  });

  it('leaves out the tools a chat upstream cannot run when nothing forces them, and lists them', () => {
    const hosted = [
      { type: 'web_search' },
      { type: 'file_search', vector_store_ids: ['vs_1'] },
      { type: 'mcp', server_label: 'x', server_url: 'https://example.com' },
      { type: 'code_interpreter', container: { type: 'auto' } },
      { type: 'image_generation' },
      { type: 'computer_use_preview', display_width: 1, display_height: 1, environment: 'linux' },
      { type: 'local_shell' },
      { type: 'custom', name: 'apply_patch', format: { type: 'grammar', syntax: 'lark', definition: 'start: "x"' } },
      { type: 'tool_search', execution: 'client' },
    ];
    const { body, dropped } = responsesToChat(request({ tools: [...hosted, WEATHER_TOOL], tool_choice: 'auto' }), []);
    expect((body['tools'] as Array<{ function: { name: string } }>).map((tool) => tool.function.name)).toEqual(['get_weather']);
    expect(dropped.map((tool) => tool.type)).toEqual(hosted.map((tool) => tool.type));
    expect(dropped[1]).toEqual({ type: 'file_search', param: 'tools[1]' });
    // With nothing left to offer, the request goes out without tools (and without tool_choice, which OpenAI chat refuses then).
    const none = responsesToChat(request({ tools: [{ type: 'web_search' }], tool_choice: 'auto' }), []);
    expect(none.body).not.toHaveProperty('tools');
    expect(none.body).not.toHaveProperty('tool_choice');
    // An allowed_tools choice may name a left-out tool beside functions.
    const allowed = convert({
      tools: [WEATHER_TOOL, { type: 'web_search' }],
      tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'web_search' }, { type: 'function', name: 'get_weather' }] },
    });
    expect(allowed['tool_choice']).toBe('required');
  });

  it("names a namespace's functions within every upstream's limits, never as a plain function is named, and back", () => {
    const fn = (name: string) => ({ type: 'function', name, parameters: { type: 'object', properties: {} } });
    const tools = [
      fn('crm__find'),
      { type: 'namespace', name: 'crm', description: 'Customer records.', tools: [fn('find'), fn('update')] },
      { type: 'namespace', name: 'mcp.my server', description: 'Odd characters.', tools: [fn('lookup')] },
      { type: 'namespace', name: 'n'.repeat(60), description: 'Long.', tools: [fn('first_function'), fn('second_function')] },
      { type: 'namespace', name: '9lives', description: 'Starts with a digit.', tools: [fn('x')] },
    ];
    const body = convert({ tools: tools as ResponsesRequest['tools'] });
    const names = (body['tools'] as Array<{ function: { name: string } }>).map((tool) => tool.function.name);
    expect(names[0]).toBe('crm__find');
    expect(names[2]).toBe('crm__update');
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/);
    const table = ChatToolNames.of(tools);
    expect(names.slice(1).map((name) => table.qualified(name))).toEqual([
      { namespace: 'crm', name: 'find' },
      { namespace: 'crm', name: 'update' },
      { namespace: 'mcp.my server', name: 'lookup' },
      { namespace: 'n'.repeat(60), name: 'first_function' },
      { namespace: 'n'.repeat(60), name: 'second_function' },
      { namespace: '9lives', name: 'x' },
    ]);
    expect(table.qualified('crm__find')).toEqual({ name: 'crm__find' });
    expect(table.qualified('unknown')).toEqual({ name: 'unknown' });
  });

  it('sends an earlier call of a namespace function under its chat name', () => {
    const tools = [
      {
        type: 'namespace',
        name: 'multi_agent_v1',
        description: 'Agents.',
        tools: [{ type: 'function', name: 'spawn_agent', parameters: { type: 'object', properties: {} } }],
      },
    ];
    const body = convert({
      tools: tools as ResponsesRequest['tools'],
      input: [
        { role: 'user', content: 'Start a helper' },
        { type: 'function_call', call_id: 'call_1', namespace: 'multi_agent_v1', name: 'spawn_agent', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'agent 7' },
      ],
    });
    expect((body['messages'] as unknown[])[1]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'multi_agent_v1__spawn_agent', arguments: '{}' } }],
    });
  });
});
