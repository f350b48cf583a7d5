import type { ChatFunctionTool, ChatToolChoice } from '../openai-chat/chat-types.js';
import { isObject } from '../../core/index.js';
import type { ChatToolNames } from './chat-tool-names.js';
import { refuseField } from './refuse-field.js';
import type { ResponsesRequest, ResponseTextConfig } from './responses-types.js';

export interface ChatToolFields {
  tools?: ChatFunctionTool[];
  tool_choice?: ChatToolChoice;
  parallel_tool_calls?: boolean;
}

/** A tool of the request that the chat upstream is not offered, and where it was. */
export interface DroppedTool {
  type: string;
  param: string;
}

export interface ToolConversion {
  fields: ChatToolFields;
  dropped: DroppedTool[];
}

/**
 * The published tool types a chat upstream cannot be offered: OpenAI runs the hosted ones
 * (web_search, file_search, code_interpreter, image_generation, mcp…), and the calls of the others
 * (custom, local_shell, shell, apply_patch, computer, tool_search) are items chat has no form for.
 * They are left out when the request does not force them; a type outside this list is refused.
 */
const DROPPED_TYPES = new Set([
  'web_search',
  'web_search_2025_08_26',
  'web_search_preview',
  'web_search_preview_2025_03_11',
  'file_search',
  'code_interpreter',
  'image_generation',
  'mcp',
  'programmatic_tool_calling',
  'computer',
  'computer_use',
  'computer_use_preview',
  'local_shell',
  'shell',
  'apply_patch',
  'custom',
  'tool_search',
]);

/**
 * Function tools become chat tools, and so do the functions of a `namespace` (named by
 * ChatToolNames). The tools a chat upstream cannot be offered (DROPPED_TYPES) are left out and
 * listed in `dropped`, unless `tool_choice` forces one: then the request is refused, since it
 * asks for what the model cannot do.
 */
export function convertTools(request: Pick<ResponsesRequest, 'tools' | 'tool_choice' | 'parallel_tool_calls'>, names: ChatToolNames): ToolConversion {
  const dropped: DroppedTool[] = [];
  let tools: ChatFunctionTool[] = [];
  (request.tools ?? []).forEach((tool, index) => tools.push(...convertTool(tool, `tools[${index}]`, names, dropped)));
  let toolChoice: ChatToolChoice | undefined;
  const choice = request.tool_choice;
  if (choice === 'none' || choice === 'auto' || choice === 'required') {
    toolChoice = choice;
  } else if (isObject(choice) && choice.type === 'function' && typeof choice['name'] === 'string') {
    toolChoice = { type: 'function', function: { name: choice['name'] } };
  } else if (isObject(choice) && choice.type === 'allowed_tools') {
    // Chat has no allowed-tools choice that every upstream understands; offering only the allowed
    // tools with the same mode asks the model the same thing.
    const allowed = allowedToolNames(choice['tools'], names);
    tools = tools.filter((tool) => allowed.has(tool.function.name));
    toolChoice = choice['mode'] === 'required' ? 'required' : 'auto';
  } else if (choice !== undefined && choice !== null) {
    const type = isObject(choice) ? String(choice.type) : String(choice);
    throw refuseField('tool_choice', `tool_choice of type '${type}' names a tool this model's upstream cannot run; only function tools are supported.`);
  }
  if (toolChoice === 'required' && tools.length === 0 && dropped.length > 0) {
    const types = [...new Set(dropped.map((tool) => tool.type))].join(', ');
    throw refuseField(
      'tool_choice',
      `tool_choice requires a tool call, but this model's upstream can run none of the tools offered (${types}); only function tools are supported.`,
    );
  }
  // OpenAI's chat endpoint refuses tool_choice and parallel_tool_calls without tools.
  if (tools.length === 0) return { fields: {}, dropped };
  const fields: ChatToolFields = { tools };
  if (toolChoice !== undefined) fields.tool_choice = toolChoice;
  if (typeof request.parallel_tool_calls === 'boolean') fields.parallel_tool_calls = request.parallel_tool_calls;
  return { fields, dropped };
}

function convertTool(tool: unknown, param: string, names: ChatToolNames, dropped: DroppedTool[]): ChatFunctionTool[] {
  const type = isObject(tool) ? tool['type'] : undefined;
  if (!isObject(tool) || typeof type !== 'string') throw refuseField(`${param}.type`, 'Each tool needs a type.');
  if (type === 'function') return [convertFunction(tool, param, (name) => name)];
  if (type === 'namespace') return convertNamespace(tool, param, names, dropped);
  if (DROPPED_TYPES.has(type)) {
    dropped.push({ type, param });
    return [];
  }
  throw refuseField(
    `${param}.type`,
    `Tools of type '${type}' are not known to this gateway and cannot be used with this model; function and namespace tools are supported.`,
  );
}

function convertNamespace(tool: Record<string, unknown>, param: string, names: ChatToolNames, dropped: DroppedTool[]): ChatFunctionTool[] {
  const namespace = tool['name'];
  if (typeof namespace !== 'string' || namespace === '') throw refuseField(`${param}.name`, 'A namespace tool needs a name.');
  const members = tool['tools'];
  if (!Array.isArray(members)) throw refuseField(`${param}.tools`, 'A namespace tool needs a list of tools.');
  const description = typeof tool['description'] === 'string' && tool['description'] !== '' ? tool['description'] : null;
  const converted: ChatFunctionTool[] = [];
  (members as unknown[]).forEach((member, index) => {
    const memberParam = `${param}.tools[${index}]`;
    const type = isObject(member) ? member['type'] : undefined;
    if (isObject(member) && type === 'function') {
      const chat = convertFunction(member, memberParam, (name) => names.chatName(name, namespace));
      // The namespace's description is what tells the model what its functions are for; chat
      // has nowhere else to put it.
      if (description !== null)
        chat.function.description = `${namespace}: ${description}${chat.function.description === undefined ? '' : `\n\n${chat.function.description}`}`;
      converted.push(chat);
    } else if (typeof type === 'string' && DROPPED_TYPES.has(type)) {
      dropped.push({ type, param: memberParam });
    } else {
      throw refuseField(`${memberParam}.type`, 'A namespace holds function and custom tools.');
    }
  });
  return converted;
}

function convertFunction(tool: Record<string, unknown>, param: string, chatName: (name: string) => string): ChatFunctionTool {
  const name = tool['name'];
  if (typeof name !== 'string' || name === '') throw refuseField(`${param}.name`, 'A function tool needs a name.');
  if (tool['defer_loading'] === true) {
    throw refuseField(`${param}.defer_loading`, 'Deferred tools need OpenAI tool search, which this model does not have.');
  }
  if (tool['output_schema'] !== undefined && tool['output_schema'] !== null) {
    throw refuseField(`${param}.output_schema`, 'output_schema cannot be passed to a chat completions upstream.');
  }
  const callers = tool['allowed_callers'];
  if (Array.isArray(callers) && callers.some((caller) => caller !== 'direct')) {
    throw refuseField(`${param}.allowed_callers`, 'Programmatic tool calling cannot be passed to a chat completions upstream.');
  }
  const definition: ChatFunctionTool['function'] = { name: chatName(name) };
  if (typeof tool['description'] === 'string') definition.description = tool['description'];
  if (isObject(tool['parameters'])) definition.parameters = tool['parameters'];
  // An absent `strict` is left absent: Responses then tries strict mode and falls back to
  // best effort, and best effort is what chat does without it.
  if (typeof tool['strict'] === 'boolean') definition.strict = tool['strict'];
  return { type: 'function', function: definition };
}

/** The chat names of the allowed functions; hosted and other tools that are left out are left out here too. */
function allowedToolNames(tools: unknown, names: ChatToolNames): Set<string> {
  const allowed = new Set<string>();
  if (!Array.isArray(tools)) throw refuseField('tool_choice.tools', 'allowed_tools needs a list of tools.');
  tools.forEach((tool: unknown, index) => {
    const type = isObject(tool) ? tool['type'] : undefined;
    if (isObject(tool) && type === 'function' && typeof tool['name'] === 'string') {
      allowed.add(names.chatName(tool['name'], typeof tool['namespace'] === 'string' ? tool['namespace'] : null));
    } else if (!(typeof type === 'string' && DROPPED_TYPES.has(type))) {
      throw refuseField(`tool_choice.tools[${index}]`, 'Only function tools can be allowed with this model.');
    }
  });
  return allowed;
}

/** `text.format` as chat's `response_format`; `text.verbosity` has the same name and values in chat. */
export function convertTextConfig(text: ResponseTextConfig | null | undefined): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  const format: unknown = text?.format;
  if (isObject(format) && format['type'] === 'json_object') {
    fields['response_format'] = { type: 'json_object' };
  } else if (isObject(format) && format['type'] === 'json_schema') {
    if (typeof format['name'] !== 'string' || !isObject(format['schema'])) {
      throw refuseField('text.format', 'A json_schema format needs a name and a schema.');
    }
    const schema: Record<string, unknown> = { name: format['name'], schema: format['schema'] };
    if (typeof format['description'] === 'string') schema['description'] = format['description'];
    if (typeof format['strict'] === 'boolean') schema['strict'] = format['strict'];
    fields['response_format'] = { type: 'json_schema', json_schema: schema };
  } else if (format !== undefined && format !== null && !(isObject(format) && format['type'] === 'text')) {
    const type = isObject(format) ? String(format['type']) : typeof format;
    throw refuseField('text.format.type', `text.format of type '${type}' is not supported.`);
  }
  if (typeof text?.verbosity === 'string') fields['verbosity'] = text.verbosity;
  return fields;
}
