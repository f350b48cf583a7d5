import { isRecord } from './convert-chat-usage.js';
import { refuseField } from './refuse-field.js';
import type { ResponsesRequest, ResponseTextConfig } from './responses-request.js';

export interface ChatFunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

export type ChatToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

export interface ChatToolFields {
  tools?: ChatFunctionTool[];
  tool_choice?: ChatToolChoice;
  parallel_tool_calls?: boolean;
}

/**
 * Function tools become chat tools. Every other kind (web_search, file_search, computer_use,
 * code_interpreter, mcp, custom, shell…) runs on OpenAI's side, which a chat upstream does not
 * have, so the request is refused rather than answered without the tool.
 */
export function convertTools(request: Pick<ResponsesRequest, 'tools' | 'tool_choice' | 'parallel_tool_calls'>): ChatToolFields {
  let tools = (request.tools ?? []).map((tool, index) => convertTool(tool, index));
  let toolChoice: ChatToolChoice | undefined;
  const choice = request.tool_choice;
  if (choice === 'none' || choice === 'auto' || choice === 'required') {
    toolChoice = choice;
  } else if (isRecord(choice) && choice.type === 'function' && typeof choice['name'] === 'string') {
    toolChoice = { type: 'function', function: { name: choice['name'] } };
  } else if (isRecord(choice) && choice.type === 'allowed_tools') {
    // Chat has no allowed-tools choice that every upstream understands; offering only the allowed
    // tools with the same mode asks the model the same thing.
    const allowed = allowedToolNames(choice['tools']);
    tools = tools.filter((tool) => allowed.has(tool.function.name));
    toolChoice = choice['mode'] === 'required' ? 'required' : 'auto';
  } else if (choice !== undefined && choice !== null) {
    const type = isRecord(choice) ? String(choice.type) : String(choice);
    throw refuseField('tool_choice', `tool_choice of type '${type}' names a tool this model's upstream cannot run; only function tools are supported.`);
  }
  // OpenAI's chat endpoint refuses tool_choice and parallel_tool_calls without tools.
  if (tools.length === 0) return {};
  const fields: ChatToolFields = { tools };
  if (toolChoice !== undefined) fields.tool_choice = toolChoice;
  if (typeof request.parallel_tool_calls === 'boolean') fields.parallel_tool_calls = request.parallel_tool_calls;
  return fields;
}

function convertTool(tool: unknown, index: number): ChatFunctionTool {
  if (!isRecord(tool) || tool['type'] !== 'function') {
    const type = isRecord(tool) ? String(tool['type']) : typeof tool;
    throw refuseField(`tools[${index}].type`, `Tools of type '${type}' run on OpenAI's side and cannot be used with this model; only function tools are supported.`);
  }
  const name = tool['name'];
  if (typeof name !== 'string' || name === '') throw refuseField(`tools[${index}].name`, 'A function tool needs a name.');
  if (tool['defer_loading'] === true) {
    throw refuseField(`tools[${index}].defer_loading`, 'Deferred tools need OpenAI tool search, which this model does not have.');
  }
  if (tool['output_schema'] !== undefined && tool['output_schema'] !== null) {
    throw refuseField(`tools[${index}].output_schema`, 'output_schema cannot be passed to a chat completions upstream.');
  }
  const callers = tool['allowed_callers'];
  if (Array.isArray(callers) && callers.some((caller) => caller !== 'direct')) {
    throw refuseField(`tools[${index}].allowed_callers`, 'Programmatic tool calling cannot be passed to a chat completions upstream.');
  }
  const definition: ChatFunctionTool['function'] = { name };
  if (typeof tool['description'] === 'string') definition.description = tool['description'];
  if (isRecord(tool['parameters'])) definition.parameters = tool['parameters'];
  // An absent `strict` is left absent: Responses then tries strict mode and falls back to
  // best effort, and best effort is what chat does without it.
  if (typeof tool['strict'] === 'boolean') definition.strict = tool['strict'];
  return { type: 'function', function: definition };
}

function allowedToolNames(tools: unknown): Set<string> {
  const names = new Set<string>();
  if (!Array.isArray(tools)) throw refuseField('tool_choice.tools', 'allowed_tools needs a list of tools.');
  tools.forEach((tool: unknown, index) => {
    if (!isRecord(tool) || tool['type'] !== 'function' || typeof tool['name'] !== 'string') {
      throw refuseField(`tool_choice.tools[${index}]`, 'Only function tools can be allowed with this model.');
    }
    names.add(tool['name']);
  });
  return names;
}

/** `text.format` as chat's `response_format`; `text.verbosity` has the same name and values in chat. */
export function convertTextConfig(text: ResponseTextConfig | null | undefined): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  const format: unknown = text?.format;
  if (isRecord(format) && format['type'] === 'json_object') {
    fields['response_format'] = { type: 'json_object' };
  } else if (isRecord(format) && format['type'] === 'json_schema') {
    if (typeof format['name'] !== 'string' || !isRecord(format['schema'])) {
      throw refuseField('text.format', 'A json_schema format needs a name and a schema.');
    }
    const schema: Record<string, unknown> = { name: format['name'], schema: format['schema'] };
    if (typeof format['description'] === 'string') schema['description'] = format['description'];
    if (typeof format['strict'] === 'boolean') schema['strict'] = format['strict'];
    fields['response_format'] = { type: 'json_schema', json_schema: schema };
  } else if (format !== undefined && format !== null && !(isRecord(format) && format['type'] === 'text')) {
    const type = isRecord(format) ? String(format['type']) : typeof format;
    throw refuseField('text.format.type', `text.format of type '${type}' is not supported.`);
  }
  if (typeof text?.verbosity === 'string') fields['verbosity'] = text.verbosity;
  return fields;
}
