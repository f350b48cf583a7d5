import { asObject } from '../../core/index.js';
import type { ChatFunctionTool, ChatToolChoice } from '../openai-chat/chat-types.js';
import { refuseField } from '../openai-responses/refuse-field.js';

export interface ConvertedTools {
  /** `tools`, `tool_choice` and `parallel_tool_calls`, as far as the request has them. */
  fields: { tools?: ChatFunctionTool[]; tool_choice?: ChatToolChoice; parallel_tool_calls?: boolean };
  /** The tools not sent, none of which the answer needs: for a log line. */
  dropped: string[];
}

/**
 * A Messages request's `tools` and `tool_choice` as chat's. Client tools (no `type`, or `custom`)
 * become function tools; their `cache_control`, `defer_loading` and examples are Anthropic's
 * bookkeeping and are not sent. A tool search tool is not sent either: it exists to load deferred
 * tools on demand, and the chat upstream is offered every tool from the start. Every other typed
 * tool is Anthropic's to run (web search, code execution…) or has a schema only Anthropic's
 * models know (bash, text editor, computer, memory), so a request with one is refused, naming it.
 */
export function convertMessagesTools(toolsValue: unknown, choiceValue: unknown): ConvertedTools {
  const tools: ChatFunctionTool[] = [];
  const dropped: string[] = [];
  if (toolsValue !== undefined && toolsValue !== null) {
    if (!Array.isArray(toolsValue)) throw refuseField('tools', 'tools must be a list.');
    toolsValue.forEach((value, index) => {
      const tool = asObject(value) ?? {};
      const type = tool['type'];
      if (typeof type === 'string' && type.startsWith('tool_search_tool')) {
        dropped.push(`tools.${index} (${type})`);
        return;
      }
      if (type !== undefined && type !== null && type !== 'custom') {
        throw refuseField(
          `tools.${index}.type`,
          `Tools of type ${JSON.stringify(type)} are run or defined by Anthropic; this model is served over a chat completions upstream, which has no such tool.`,
        );
      }
      if (typeof tool['name'] !== 'string' || tool['name'] === '') throw refuseField(`tools.${index}.name`, 'A tool needs a name.');
      const definition: ChatFunctionTool['function'] = { name: tool['name'] };
      if (typeof tool['description'] === 'string') definition.description = tool['description'];
      definition.parameters = asObject(tool['input_schema']) ?? { type: 'object', properties: {} };
      if (tool['strict'] === true) definition.strict = true;
      tools.push({ type: 'function', function: definition });
    });
  }
  const fields: ConvertedTools['fields'] = {};
  if (tools.length === 0) return { fields, dropped };
  fields.tools = tools;
  const choice = asObject(choiceValue);
  if (choice === undefined) return { fields, dropped };
  switch (choice['type']) {
    case 'auto':
      fields.tool_choice = 'auto';
      break;
    case 'any':
      fields.tool_choice = 'required';
      break;
    case 'none':
      fields.tool_choice = 'none';
      break;
    case 'tool':
      if (typeof choice['name'] !== 'string') throw refuseField('tool_choice.name', 'tool_choice of type "tool" needs the tool\'s name.');
      fields.tool_choice = { type: 'function', function: { name: choice['name'] } };
      break;
    default:
      throw refuseField('tool_choice.type', 'tool_choice.type must be "auto", "any", "tool" or "none".');
  }
  if (choice['disable_parallel_tool_use'] === true && choice['type'] !== 'none') fields.parallel_tool_calls = false;
  return { fields, dropped };
}
