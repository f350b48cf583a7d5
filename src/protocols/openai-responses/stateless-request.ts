import { isObject } from '../../core/index.js';
import type { ResponseInputItem, ResponsesRequest, ResponseTool, StatelessResponsesRequest } from './responses-types.js';

/**
 * The fields of a caller's request a backend that keeps nothing (the ChatGPT Codex backend) is
 * sent. The others it refuses (`Unsupported parameter`: temperature, top_p, max_output_tokens,
 * metadata, user, service_tier…), or cannot honour, and they are left out, as the conversion
 * through chat left them out; `store` and `stream` are its own.
 */
const CARRIED_FIELDS = ['tool_choice', 'parallel_tool_calls', 'reasoning', 'text', 'include', 'prompt_cache_key'] as const;

export interface StatelessRequestOptions {
  /** The model name the backend knows (the route's upstream model). */
  upstreamModel: string;
  /** The whole conversation: the turns the gateway stored, then this request's input, references resolved. */
  input: readonly ResponseInputItem[];
  /** The `param`s of the tools the upstream is not offered (`tools[2]`, `tools[0].tools[1]`), as the chat conversion leaves them out. */
  leftOut: ReadonlySet<string>;
}

/**
 * A caller's Responses request as the backend takes it, in the Responses API still: tools,
 * namespaces, reasoning and text controls as they came. The items go without ids (the backend
 * stores nothing to look them up by), and without reasoning items, whose encrypted content only
 * the account that made them can read (a conversation may move to another account).
 */
export function toStatelessRequest(request: ResponsesRequest, options: StatelessRequestOptions): StatelessResponsesRequest {
  const stateless: StatelessResponsesRequest = {
    model: options.upstreamModel,
    // The backend refuses a request without instructions; an empty string passes.
    instructions: typeof request.instructions === 'string' ? request.instructions : '',
    input: options.input.filter((item) => item.type !== 'reasoning').map(withoutItemId),
    stream: true,
    store: false,
  };
  const tools = offeredTools(request.tools ?? [], options.leftOut);
  if (tools.length > 0) stateless.tools = tools;
  for (const field of CARRIED_FIELDS) {
    const value = request[field];
    if (value !== undefined && value !== null && (tools.length > 0 || (field !== 'tool_choice' && field !== 'parallel_tool_calls'))) {
      Object.assign(stateless, { [field]: value });
    }
  }
  return stateless;
}

function offeredTools(tools: readonly ResponseTool[], leftOut: ReadonlySet<string>): ResponseTool[] {
  const offered: ResponseTool[] = [];
  tools.forEach((tool, index) => {
    const param = `tools[${index}]`;
    if (leftOut.has(param)) return;
    const members = tool.type === 'namespace' && isObject(tool) ? tool['tools'] : undefined;
    if (!Array.isArray(members)) {
      offered.push(tool);
      return;
    }
    const kept = (members as unknown[]).filter((_member, memberIndex) => !leftOut.has(`${param}.tools[${memberIndex}]`));
    if (kept.length > 0) offered.push({ ...tool, tools: kept });
  });
  return offered;
}

function withoutItemId(item: ResponseInputItem): ResponseInputItem {
  if (!('id' in item) || item.type === 'item_reference') return item;
  const { id: _id, ...rest } = item;
  return rest as ResponseInputItem;
}
