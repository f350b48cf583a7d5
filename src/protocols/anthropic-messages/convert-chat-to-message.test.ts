import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { errorBodySchemaErrors, messageSchemaErrors } from './anthropic-messages-schema-contract.js';
import { chatCompletionToMessage } from './convert-chat-to-message.js';
import { messagesErrorBody, messagesErrorType, messagesStatus } from './messages-error.js';

function recorded(name: string): unknown {
  return JSON.parse(readFileSync(new URL(`../../../test/fixtures/openai/${name}`, import.meta.url), 'utf8')) as unknown;
}

describe('chatCompletionToMessage', () => {
  it('makes a recorded completion a message: its text a text block, its usage as Anthropic counts it', () => {
    const message = chatCompletionToMessage(recorded('chat-completion.json'), 'public', 'msg_1');
    expect(message).toEqual({
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'public',
      content: [{ type: 'text', text: 'Hello! How can I assist you today?' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 8, output_tokens: 9, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    });
    expect(messageSchemaErrors(message)).toEqual([]);
  });

  it('makes a recorded tool call a tool_use block with its arguments parsed, and stops for tool use', () => {
    const message = chatCompletionToMessage(recorded('chat-completion-tool-call.json'), 'public', 'msg_1');
    expect(message.stop_reason).toBe('tool_use');
    const [block] = message.content;
    expect(block).toMatchObject({ type: 'tool_use', name: 'read_file' });
    expect(block?.type === 'tool_use' && typeof block.input).toBe('object');
    expect(messageSchemaErrors(message)).toEqual([]);
  });

  it('keeps arguments that are not a JSON object under `arguments`, and takes cache reads out of input_tokens', () => {
    const message = chatCompletionToMessage(
      {
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: null, tool_calls: [{ id: 'c', function: { name: 'f', arguments: 'not json' } }] },
            finish_reason: 'length',
          },
        ],
        usage: { prompt_tokens: 50, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 40 } },
      },
      'public',
      'msg_1',
    );
    expect(message.content).toEqual([{ type: 'tool_use', id: 'c', name: 'f', input: { arguments: 'not json' } }]);
    expect(message.stop_reason).toBe('max_tokens');
    expect(message.usage).toEqual({ input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 40 });
  });
});

describe("Anthropic's error statuses and types", () => {
  it.each([
    [400, false, 400, 'invalid_request_error'],
    [422, false, 400, 'invalid_request_error'],
    [401, false, 401, 'authentication_error'],
    [403, false, 403, 'permission_error'],
    [404, false, 404, 'not_found_error'],
    [413, false, 413, 'request_too_large'],
    [429, false, 429, 'rate_limit_error'],
    [500, false, 500, 'api_error'],
    [502, false, 500, 'api_error'],
    [502, true, 529, 'overloaded_error'],
    [503, false, 529, 'overloaded_error'],
    [504, false, 504, 'timeout_error'],
  ])('gateway status %i (overloaded upstream: %s) is %i %s', (status, overloaded, anthropicStatus, type) => {
    expect(messagesStatus(status, overloaded)).toBe(anthropicStatus);
    expect(messagesErrorType(anthropicStatus)).toBe(type);
  });

  it('writes the envelope, as published for every type the published schema has', () => {
    expect(messagesErrorBody(529, 'Overloaded')).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    for (const status of [400, 401, 403, 404, 429, 500, 529]) expect(errorBodySchemaErrors(messagesErrorBody(status, 'm'))).toEqual([]);
  });
});
