import { randomBytes } from 'node:crypto';
import type { QualifiedToolName } from './chat-tool-names.js';
import type { ItemStatus, ResponseRefusalPart, ResponsesRequest, ResponseStatus, ResponseToolChoice, ResponseUsage } from './responses-types.js';

/** The request fields a Response echoes back, as OpenAI's does. A whole `ResponsesRequest` fits. */
export type ResponseEchoFields = Pick<
  ResponsesRequest,
  | 'instructions'
  | 'tools'
  | 'tool_choice'
  | 'temperature'
  | 'top_p'
  | 'top_logprobs'
  | 'max_output_tokens'
  | 'max_tool_calls'
  | 'text'
  | 'reasoning'
  | 'parallel_tool_calls'
  | 'previous_response_id'
  | 'metadata'
  | 'store'
  | 'user'
  | 'truncation'
  | 'safety_identifier'
  | 'prompt_cache_key'
>;

export interface ResponseContext {
  /** `resp_…`, chosen by the service (it is also the key the response is stored under). */
  id: string;
  /** Unix seconds. */
  createdAt: number;
  /** The public model id the client asked for: the upstream's own name is not shown. */
  model: string;
  request: ResponseEchoFields;
  /** Makes the ids of output items (`msg_…`, `fc_…`) and of tool calls the upstream left unnamed. Tests pass a counter. */
  newId?: (prefix: 'msg' | 'fc' | 'call') => string;
  /** Unix seconds, for `completed_at`. */
  now?: () => number;
  /** The Responses name of a function the upstream called by its chat name (ChatToolNames); as it came without it. */
  toolName?: (chatName: string) => QualifiedToolName;
}

export type IncompleteReason = 'max_output_tokens' | 'content_filter';

export interface ResponseOutputText {
  type: 'output_text';
  text: string;
  annotations: unknown[];
  /** Required by the published `OutputTextContent` schema; the gateway never asks an upstream for logprobs. */
  logprobs: unknown[];
}

export type ResponseOutputContent = ResponseOutputText | ResponseRefusalPart;

export interface ResponseOutputMessage {
  type: 'message';
  id: string;
  status: ItemStatus;
  role: 'assistant';
  content: ResponseOutputContent[];
}

export interface ResponseOutputFunctionCall {
  type: 'function_call';
  id: string;
  call_id: string;
  /** Set for a namespace's function, as OpenAI's answer sets it; clients (Codex) route the call by it. */
  namespace?: string;
  name: string;
  arguments: string;
  status: ItemStatus;
}

export type ResponseOutputItem = ResponseOutputMessage | ResponseOutputFunctionCall;

/** Codes the published `ResponseErrorCode` allows in `response.error`. */
export type ResponseErrorCode = 'server_error' | 'rate_limit_exceeded';

export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: ResponseStatus;
  completed_at: number | null;
  error: { code: ResponseErrorCode; message: string } | null;
  incomplete_details: { reason: IncompleteReason } | null;
  instructions: string | null;
  max_output_tokens: number | null;
  max_tool_calls: number | null;
  model: string;
  output: ResponseOutputItem[];
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  reasoning: { effort: string | null; summary: string | null };
  service_tier?: string;
  store: boolean;
  temperature: number | null;
  text: { format: unknown; verbosity?: string };
  tool_choice: ResponseToolChoice;
  tools: unknown[];
  top_p: number | null;
  top_logprobs?: number;
  truncation: 'auto' | 'disabled';
  usage?: ResponseUsage;
  user?: string;
  metadata: Record<string, string>;
  background: boolean;
  safety_identifier: string | null;
  prompt_cache_key: string | null;
}

export interface ResponseState {
  status: ResponseStatus;
  output: ResponseOutputItem[];
  usage?: ResponseUsage | null;
  incompleteReason?: IncompleteReason | null;
  error?: ResponseObject['error'];
  /** The tier the upstream says served the call, kept only when it is one of the Responses API's. */
  serviceTier?: unknown;
}

const SERVICE_TIERS = new Set(['auto', 'default', 'flex', 'scale', 'priority', 'fast', 'ultrafast']);

/**
 * The Response object around an output. Where a request left a field out, the echo says `null`
 * rather than OpenAI's default (temperature 1…): the gateway does not know the upstream's defaults.
 * `user` and `usage` are left out instead, since the published schema does not allow them null.
 * There is no `output_text`: the schema calls it an SDK-only convenience, computed client-side.
 */
export function createResponseObject(context: ResponseContext, state: ResponseState): ResponseObject {
  const { request } = context;
  const response: ResponseObject = {
    id: context.id,
    object: 'response',
    created_at: context.createdAt,
    status: state.status,
    completed_at: state.status === 'completed' ? (context.now ?? nowSeconds)() : null,
    error: state.error ?? null,
    incomplete_details: state.incompleteReason ? { reason: state.incompleteReason } : null,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    max_tool_calls: request.max_tool_calls ?? null,
    model: context.model,
    output: state.output,
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id: request.previous_response_id ?? null,
    reasoning: { effort: request.reasoning?.effort ?? null, summary: request.reasoning?.summary ?? null },
    store: request.store ?? true,
    temperature: request.temperature ?? null,
    text: echoText(request.text),
    tool_choice: request.tool_choice ?? 'auto',
    tools: (request.tools ?? []).map(echoTool),
    top_p: request.top_p ?? null,
    truncation: request.truncation ?? 'disabled',
    metadata: request.metadata ?? {},
    background: false,
    safety_identifier: request.safety_identifier ?? null,
    prompt_cache_key: request.prompt_cache_key ?? null,
  };
  if (typeof state.serviceTier === 'string' && SERVICE_TIERS.has(state.serviceTier)) response.service_tier = state.serviceTier;
  if (typeof request.top_logprobs === 'number') response.top_logprobs = request.top_logprobs;
  if (state.usage) response.usage = state.usage;
  if (typeof request.user === 'string') response.user = request.user;
  return response;
}

function echoText(text: ResponsesRequest['text']): ResponseObject['text'] {
  const echoed: ResponseObject['text'] = { format: text?.format ?? { type: 'text' } };
  if (typeof text?.verbosity === 'string') echoed.verbosity = text.verbosity;
  return echoed;
}

/** The published `FunctionTool` requires `description`-less tools to still say `parameters` and `strict`. */
function echoTool(tool: NonNullable<ResponsesRequest['tools']>[number]): unknown {
  if (tool.type !== 'function') return tool;
  return { ...tool, description: tool['description'] ?? null, parameters: tool['parameters'] ?? null, strict: tool['strict'] ?? null };
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** OpenAI's item ids are a prefix and 48 hex digits (`msg_67ccd3acc8d4…`); these look the same. */
export function randomItemId(prefix: string): string {
  return `${prefix}_${randomBytes(24).toString('hex')}`;
}

/** A function call's `name` and, for a namespace's function, its `namespace`. */
export function toolNameFields(context: ResponseContext, chatName: string): QualifiedToolName {
  const qualified = context.toolName?.(chatName) ?? { name: chatName };
  return qualified.namespace === undefined ? { name: qualified.name } : { namespace: qualified.namespace, name: qualified.name };
}

export function idMaker(context: ResponseContext): (prefix: 'msg' | 'fc' | 'call') => string {
  return context.newId ?? randomItemId;
}
