import { asObject } from '../../core/index.js';
import { GatewayError } from '../../errors/index.js';
import type { ChatRequestBody } from '../openai-chat/chat-types.js';
import { DEFAULT_MAX_TOKENS, type AnthropicMessagesRequest, type AnthropicTool, type AnthropicToolChoice } from './messages-types.js';
import { convertToAnthropicMessages } from './convert-chat-messages.js';

/**
 * An OpenAI chat completions body as an Anthropic Messages request. Parameters Anthropic has no
 * equivalent for (n, seed, logprobs, response_format, penalties…) are not sent.
 */
export function convertToAnthropicRequest(body: ChatRequestBody, options: { stream: boolean }): AnthropicMessagesRequest {
  const { system, messages } = convertToAnthropicMessages(body.messages);
  const request: AnthropicMessagesRequest = {
    model: body.model,
    messages,
    max_tokens: positiveInteger(body['max_completion_tokens']) ?? positiveInteger(body['max_tokens']) ?? DEFAULT_MAX_TOKENS,
  };
  if (system !== undefined) request.system = system;

  const tools = convertTools(body['tools']);
  if (tools !== undefined) request.tools = tools;
  const toolChoice = convertToolChoice(body['tool_choice'], body['parallel_tool_calls'], tools !== undefined);
  if (toolChoice !== undefined) request.tool_choice = toolChoice;

  const temperature = body['temperature'];
  // OpenAI accepts 0–2, Anthropic 0–1: values above 1 are clamped to 1, Anthropic's most random setting.
  if (typeof temperature === 'number') request.temperature = Math.min(temperature, 1);
  const topP = body['top_p'];
  if (typeof topP === 'number') request.top_p = topP;
  const stop = body['stop'];
  if (typeof stop === 'string') request.stop_sequences = [stop];
  else if (Array.isArray(stop)) request.stop_sequences = stop.filter((sequence): sequence is string => typeof sequence === 'string');
  if (options.stream) request.stream = true;
  const user = body['user'];
  if (typeof user === 'string' && user !== '') request.metadata = { user_id: user };
  return request;
}

function convertTools(value: unknown): AnthropicTool[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  return value.map((item, index) => {
    const tool = asObject(item) ?? {};
    const definition = asObject(tool['function']);
    if (tool['type'] !== 'function' || definition === undefined || typeof definition['name'] !== 'string') {
      throw new GatewayError('invalid_body', 'Only function tools can be sent to an Anthropic model.', { param: `tools[${index}]` });
    }
    const converted: AnthropicTool = {
      name: definition['name'],
      // Anthropic requires a schema; OpenAI allows a function without parameters.
      input_schema: definition['parameters'] ?? { type: 'object', properties: {} },
    };
    if (typeof definition['description'] === 'string') converted.description = definition['description'];
    return converted;
  });
}

function convertToolChoice(value: unknown, parallelToolCalls: unknown, hasTools: boolean): AnthropicToolChoice | undefined {
  const disableParallel = parallelToolCalls === false ? { disable_parallel_tool_use: true } : {};
  if (value === 'none') return { type: 'none' };
  if (value === 'auto') return { type: 'auto', ...disableParallel };
  if (value === 'required') return { type: 'any', ...disableParallel };
  const named = asObject(asObject(value)?.['function'])?.['name'];
  if (typeof named === 'string') return { type: 'tool', name: named, ...disableParallel };
  if (value !== undefined && value !== null) {
    throw new GatewayError('invalid_body', 'tool_choice must be "auto", "none", "required" or a named function for an Anthropic model.', {
      param: 'tool_choice',
    });
  }
  // Without a tool_choice, `parallel_tool_calls: false` still has to reach Anthropic, which carries it on tool_choice.
  return hasTools && parallelToolCalls === false ? { type: 'auto', disable_parallel_tool_use: true } : undefined;
}

function positiveInteger(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;
}
