import type { AnthropicMessageResponse } from './messages-types.js';
import type { ChatFinishReason } from '../openai-chat/chat-types.js';
import { mapAnthropicFinishReason } from './stop-reason.js';
import { mapAnthropicUsage, type OpenAIUsagePayload } from './messages-usage.js';

export interface OpenAIToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface OpenAIChatCompletionPayload {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: Array<{
    index: 0;
    message: { role: 'assistant'; content: string | null; refusal: null; tool_calls?: OpenAIToolCall[] };
    logprobs: null;
    finish_reason: ChatFinishReason;
  }>;
  usage?: OpenAIUsagePayload;
}

/**
 * An Anthropic message as an OpenAI `chat.completion`: text blocks make the content, `tool_use`
 * blocks the tool calls; thinking and server-tool blocks have no OpenAI equivalent and are left out.
 */
export function convertToOpenAICompletion(message: AnthropicMessageResponse, nowSeconds: number): OpenAIChatCompletionPayload {
  let text = '';
  let hasText = false;
  const toolCalls: OpenAIToolCall[] = [];
  for (const block of message.content ?? []) {
    if (block.type === 'text' && typeof block.text === 'string') {
      text += block.text;
      hasText = true;
    } else if (block.type === 'tool_use') {
      toolCalls.push({
        id: block.id ?? '',
        type: 'function',
        function: { name: block.name ?? '', arguments: JSON.stringify(block.input ?? {}) },
      });
    }
  }
  const usage = mapAnthropicUsage(message.usage);
  return {
    id: message.id ?? '',
    object: 'chat.completion',
    created: nowSeconds,
    model: message.model ?? '',
    choices: [
      {
        index: 0,
        // OpenAI sends null content for an answer made only of tool calls.
        message: { role: 'assistant', content: hasText ? text : null, refusal: null, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
        logprobs: null,
        finish_reason: mapAnthropicFinishReason(message.stop_reason),
      },
    ],
    ...(usage === null ? {} : { usage }),
  };
}

/** The generated text of a completion, tool names and arguments included: all of it is billed as output. */
export function completionText(completion: OpenAIChatCompletionPayload): string {
  let text = '';
  for (const choice of completion.choices) {
    text += choice.message.content ?? '';
    for (const call of choice.message.tool_calls ?? []) text += call.function.name + call.function.arguments;
  }
  return text;
}
