import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/index.js';
import { messagesToChat } from './convert-messages-to-chat.js';
import type { MessagesRequestBody } from './messages-types.js';

function request(fields: Partial<MessagesRequestBody> & Record<string, unknown>): MessagesRequestBody {
  return { model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }], ...fields };
}

function refusal(body: MessagesRequestBody): GatewayError {
  try {
    messagesToChat(body);
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('converted without refusing');
}

describe('messagesToChat', () => {
  it('makes the system prompt a system message, its blocks joined by a blank line, and keeps a system message where it stands', () => {
    const { body } = messagesToChat(
      request({
        system: [
          { type: 'text', text: 'You are Claude Code.', cache_control: { type: 'ephemeral' } },
          { type: 'text', text: 'Be brief.' },
        ],
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'system', content: [{ type: 'text', text: 'Today is Monday.' }] },
          { role: 'assistant', content: 'Hello.' },
        ],
      }),
    );
    expect(body.messages).toEqual([
      { role: 'system', content: 'You are Claude Code.\n\nBe brief.' },
      { role: 'user', content: 'Hi' },
      { role: 'system', content: 'Today is Monday.' },
      { role: 'assistant', content: 'Hello.' },
    ]);
  });

  it('keeps max_tokens, stop sequences, temperature and top_p, and asks a stream for its usage', () => {
    const { body } = messagesToChat(request({ max_tokens: 512, stop_sequences: ['END'], temperature: 0.2, top_p: 0.9, stream: true }));
    expect(body).toMatchObject({ max_tokens: 512, stop: ['END'], temperature: 0.2, top_p: 0.9, stream: true, stream_options: { include_usage: true } });
  });

  it('converts images, PDFs and text documents to chat content parts', () => {
    const { body } = messagesToChat(
      request({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Look:' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBOR' } },
              { type: 'image', source: { type: 'url', url: 'https://example.com/a.jpg' } },
              { type: 'document', title: 'spec.pdf', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBER' } },
              { type: 'document', title: 'Notes', source: { type: 'text', media_type: 'text/plain', data: 'Some notes.' } },
            ],
          },
        ],
      }),
    );
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look:' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBOR' } },
          { type: 'image_url', image_url: { url: 'https://example.com/a.jpg' } },
          { type: 'file', file: { filename: 'spec.pdf', file_data: 'data:application/pdf;base64,JVBER' } },
          { type: 'text', text: 'Notes\n\nSome notes.' },
        ],
      },
    ]);
  });

  it('makes tool_use blocks tool calls and tool_result blocks tool messages, a returned image following in a user message', () => {
    const { body, dropped } = messagesToChat(
      request({
        messages: [
          { role: 'user', content: 'Read it' },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'I should read it.', signature: 'sig' },
              { type: 'text', text: 'Reading.' },
              { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: '/a.png' } },
              { type: 'tool_use', id: 'toolu_2', name: 'Bash', input: { command: 'false' } },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBOR' } }] },
              { type: 'tool_result', tool_use_id: 'toolu_2', content: 'exit code 1', is_error: true, cache_control: { type: 'ephemeral' } },
              { type: 'text', text: 'What went wrong?' },
            ],
          },
        ],
      }),
    );
    expect(body.messages).toEqual([
      { role: 'user', content: 'Read it' },
      {
        role: 'assistant',
        content: 'Reading.',
        tool_calls: [
          { id: 'toolu_1', type: 'function', function: { name: 'Read', arguments: '{"file_path":"/a.png"}' } },
          { id: 'toolu_2', type: 'function', function: { name: 'Bash', arguments: '{"command":"false"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: '(an attachment follows in the next message)' },
      { role: 'tool', tool_call_id: 'toolu_2', content: 'Error: exit code 1' },
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBOR' } },
          { type: 'text', text: 'What went wrong?' },
        ],
      },
    ]);
    expect(dropped).toContain('thinking blocks');
  });

  it('offers client tools as functions, deferred ones included, and leaves a tool search tool out', () => {
    const { body, dropped } = messagesToChat(
      request({
        tools: [
          {
            name: 'Read',
            description: 'Reads a file',
            input_schema: { type: 'object', properties: { file_path: { type: 'string' } } },
            cache_control: { type: 'ephemeral' },
          },
          { name: 'Deferred', input_schema: { type: 'object' }, defer_loading: true },
          { type: 'tool_search_tool_regex_20251119', name: 'tool_search_tool_regex' },
        ],
        tool_choice: { type: 'any', disable_parallel_tool_use: true },
      }),
    );
    expect(body['tools']).toEqual([
      {
        type: 'function',
        function: { name: 'Read', description: 'Reads a file', parameters: { type: 'object', properties: { file_path: { type: 'string' } } } },
      },
      { type: 'function', function: { name: 'Deferred', parameters: { type: 'object' } } },
    ]);
    expect(body['tool_choice']).toBe('required');
    expect(body['parallel_tool_calls']).toBe(false);
    expect(dropped).toEqual(['tools.2 (tool_search_tool_regex_20251119)']);
  });

  it.each([
    [{ type: 'auto' }, 'auto'],
    [{ type: 'none' }, 'none'],
    [
      { type: 'tool', name: 'Read' },
      { type: 'function', function: { name: 'Read' } },
    ],
  ])('maps tool_choice %j', (choice, expected) => {
    const { body } = messagesToChat(request({ tools: [{ name: 'Read', input_schema: { type: 'object' } }], tool_choice: choice }));
    expect(body['tool_choice']).toEqual(expected);
    expect(body['parallel_tool_calls']).toBeUndefined();
  });

  it('leaves out, and says so, what a chat upstream has no use for: thinking, context_management, output_config.effort, metadata', () => {
    const { body, dropped } = messagesToChat(
      request({
        thinking: { type: 'adaptive', display: 'omitted' },
        context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
        output_config: { effort: 'medium' },
        metadata: { user_id: 'u' },
      }),
    );
    expect(Object.keys(body).sort()).toEqual(['max_tokens', 'messages', 'model']);
    expect(dropped).toEqual(['thinking', 'context_management', 'metadata', 'output_config.effort']);
  });

  it('makes output_config.format a json_schema response_format', () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
    const { body } = messagesToChat(request({ output_config: { format: { type: 'json_schema', schema } } }));
    expect(body['response_format']).toEqual({ type: 'json_schema', json_schema: { name: 'output', schema, strict: true } });
  });

  it.each([
    ['mcp_servers', request({ mcp_servers: [{ type: 'url', url: 'https://mcp.example.com', name: 'x' }] }), 'mcp_servers'],
    ['container', request({ container: 'container_1' }), 'container'],
    ['a server tool', request({ tools: [{ type: 'web_search_20250305', name: 'web_search' }] }), 'tools.0.type'],
    ['an Anthropic-defined client tool', request({ tools: [{ type: 'bash_20250124', name: 'bash' }] }), 'tools.0.type'],
    [
      "a server tool's result",
      request({ messages: [{ role: 'assistant', content: [{ type: 'web_search_tool_result', tool_use_id: 's', content: [] }] }] }),
      'messages.0.content.0.type',
    ],
    [
      'an image by file id',
      request({ messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'file_1' } }] }] }),
      'messages.0.content.0.source',
    ],
    [
      'a PDF by URL',
      request({ messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } }] }] }),
      'messages.0.content.0.source',
    ],
    ['an unknown role', request({ messages: [{ role: 'tool', content: 'x' }] }), 'messages.0.role'],
    ['no message for the model', request({ messages: [{ role: 'system', content: 'Only this.' }] }), 'messages'],
  ])('refuses %s with a 400 naming it', (_name, body, param) => {
    const error = refusal(body);
    expect(error.status).toBe(400);
    expect(error.code).toBe('invalid_body');
    expect(error.param).toBe(param);
  });
});
