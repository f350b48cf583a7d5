import { describe, expect, it } from 'vitest';
import type { ResponseInputItem, ResponsesRequest } from './responses-types.js';
import { toStatelessRequest } from './stateless-request.js';

describe('toStatelessRequest: a caller request as a backend that keeps nothing takes it', () => {
  const request: ResponsesRequest = {
    model: 'public-model',
    instructions: 'Be brief.',
    input: 'ignored: the conversation is given',
    tools: [
      { type: 'web_search' },
      {
        type: 'namespace',
        name: 'ns',
        tools: [
          { type: 'function', name: 'a' },
          { type: 'custom', name: 'patch' },
        ],
      },
      { type: 'function', name: 'b', parameters: { type: 'object' }, strict: true },
    ],
    tool_choice: 'auto',
    parallel_tool_calls: false,
    reasoning: { effort: 'high', summary: 'auto' },
    text: { format: { type: 'text' }, verbosity: 'low' },
    include: ['reasoning.encrypted_content'],
    prompt_cache_key: 'conversation-1',
    temperature: 0.2,
    top_p: 0.9,
    max_output_tokens: 100,
    metadata: { team: 'x' },
    user: 'u',
    store: true,
    stream: false,
  };
  const input: ResponseInputItem[] = [
    { type: 'message', role: 'user', content: 'Hi', id: 'msg_gw' } as ResponseInputItem,
    { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'opaque' },
    { type: 'function_call', id: 'fc_gw', call_id: 'call_1', namespace: 'ns', name: 'a', arguments: '{}' },
    { type: 'function_call_output', call_id: 'call_1', output: 'done' },
  ];

  it('keeps the Responses fields as they came, leaves out the tools conversion leaves out, and what the backend refuses', () => {
    const sent = toStatelessRequest(request, { upstreamModel: 'gpt-5.1-codex', input, leftOut: new Set(['tools[0]', 'tools[1].tools[1]']) });
    expect(sent).toEqual({
      model: 'gpt-5.1-codex',
      instructions: 'Be brief.',
      input: [
        { type: 'message', role: 'user', content: 'Hi' },
        { type: 'function_call', call_id: 'call_1', namespace: 'ns', name: 'a', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'done' },
      ],
      stream: true,
      store: false,
      tools: [
        { type: 'namespace', name: 'ns', tools: [{ type: 'function', name: 'a' }] },
        { type: 'function', name: 'b', parameters: { type: 'object' }, strict: true },
      ],
      tool_choice: 'auto',
      parallel_tool_calls: false,
      reasoning: { effort: 'high', summary: 'auto' },
      text: { format: { type: 'text' }, verbosity: 'low' },
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: 'conversation-1',
    });
  });

  it('sends empty instructions when there are none, and no tool_choice without tools', () => {
    const sent = toStatelessRequest(
      { model: 'm', tools: [{ type: 'web_search' }], tool_choice: 'auto' },
      { upstreamModel: 'u', input: [], leftOut: new Set(['tools[0]']) },
    );
    expect(sent).toEqual({ model: 'u', instructions: '', input: [], stream: true, store: false });
  });
});
