import { GatewayError } from '../../errors/index.js';
import type { GeminiGenerateContentRequest } from './gemini-api.js';

interface OpenAITool {
  type?: string;
  function?: { name?: string; description?: string; parameters?: unknown };
}

type GeminiToolFields = Pick<GeminiGenerateContentRequest, 'tools' | 'toolConfig'>;

/**
 * OpenAI `tools` and `tool_choice` as Gemini `tools` (one Tool holding every function declaration)
 * and `toolConfig.functionCallingConfig`: auto → AUTO, none → NONE, required → ANY, a named
 * function → ANY restricted to that name.
 */
export function convertToGeminiTools(tools: unknown, toolChoice: unknown): GeminiToolFields {
  const declarations = (Array.isArray(tools) ? (tools as OpenAITool[]) : []).map((tool, index) => {
    if (tool.type !== 'function' || tool.function?.name === undefined) {
      throw new GatewayError('upstream_bad_request', `tools[${index}] must be a function tool for Gemini upstreams.`, { param: `tools[${index}]` });
    }
    const { name, description, parameters } = tool.function;
    return {
      name,
      ...(description === undefined ? {} : { description }),
      ...(parameters === undefined ? {} : { parametersJsonSchema: parameters }),
    };
  });
  const result: GeminiToolFields = declarations.length > 0 ? { tools: [{ functionDeclarations: declarations }] } : {};
  if (toolChoice === undefined || toolChoice === null) return result;
  if (toolChoice === 'auto') return { ...result, toolConfig: { functionCallingConfig: { mode: 'AUTO' } } };
  if (toolChoice === 'none') return { ...result, toolConfig: { functionCallingConfig: { mode: 'NONE' } } };
  if (toolChoice === 'required') return { ...result, toolConfig: { functionCallingConfig: { mode: 'ANY' } } };
  const name = (toolChoice as { function?: { name?: unknown } }).function?.name;
  if (typeof name === 'string') {
    return { ...result, toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [name] } } };
  }
  throw new GatewayError('upstream_bad_request', 'tool_choice is not supported by Gemini upstreams.', { param: 'tool_choice' });
}
