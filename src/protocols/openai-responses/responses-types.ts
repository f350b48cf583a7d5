/**
 * OpenAI's Responses API (the `CreateResponse` schema of github.com/openai/openai-openapi and its
 * stream events), once for the whole gateway: what a caller sends to `/v1/responses`, what the
 * gateway sends to an upstream that speaks it (the ChatGPT Codex backend), and the events read
 * back. Fields a conversion cannot honour are typed too, so that it can name them when it refuses
 * them. These types say what a valid body looks like; the converters still check at run time the
 * discriminators and fields they read, since a client or an upstream can send any `type`.
 */
export interface ResponsesRequest {
  model: string;
  input?: string | ResponseInputItem[] | null;
  instructions?: string | null;
  tools?: ResponseTool[] | null;
  tool_choice?: ResponseToolChoice | null;
  parallel_tool_calls?: boolean | null;
  max_output_tokens?: number | null;
  /** Counts built-in tool calls only; the gateway offers none, so it only echoes the value. */
  max_tool_calls?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  top_logprobs?: number | null;
  text?: ResponseTextConfig | null;
  reasoning?: ResponseReasoningConfig | null;
  stream?: boolean | null;
  stream_options?: { include_obfuscation?: boolean } | null;
  store?: boolean | null;
  previous_response_id?: string | null;
  conversation?: string | { id: string } | null;
  metadata?: Record<string, string> | null;
  user?: string | null;
  safety_identifier?: string | null;
  prompt_cache_key?: string | null;
  prompt_cache_retention?: string | null;
  truncation?: 'auto' | 'disabled' | null;
  include?: string[] | null;
  background?: boolean | null;
  service_tier?: string | null;
  /** A stored prompt template on OpenAI's side. */
  prompt?: unknown;
  context_management?: unknown;
  moderation?: unknown;
}

export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

export type ResponseMessageRole = 'user' | 'assistant' | 'system' | 'developer';

/** Input items of a conversation, as a client sends them or as a stored turn holds them. */
export type ResponseInputItem =
  | ResponseInputMessage
  | ResponseFunctionCallItem
  | ResponseFunctionCallOutputItem
  | ResponseReasoningItem
  | ResponseItemReference;

/** `EasyInputMessage`, `InputMessage` and an earlier answer's `OutputMessage`: `type` may be left out. */
export interface ResponseInputMessage {
  type?: 'message';
  id?: string;
  role: ResponseMessageRole;
  content: string | ResponseContentPart[];
  status?: ItemStatus;
  phase?: string | null;
}

export type ResponseContentPart = ResponseInputTextPart | ResponseInputImagePart | ResponseInputFilePart | ResponseOutputTextPart | ResponseRefusalPart;

export interface ResponseInputTextPart {
  type: 'input_text';
  text: string;
}

export type ResponseImageDetail = 'low' | 'high' | 'auto' | 'original';

export interface ResponseInputImagePart {
  type: 'input_image';
  image_url?: string | null;
  file_id?: string | null;
  detail?: ResponseImageDetail | null;
}

export interface ResponseInputFilePart {
  type: 'input_file';
  file_id?: string | null;
  file_data?: string;
  file_url?: string;
  filename?: string;
}

export interface ResponseOutputTextPart {
  type: 'output_text';
  text: string;
  annotations?: unknown[];
  logprobs?: unknown[];
}

export interface ResponseRefusalPart {
  type: 'refusal';
  refusal: string;
}

export interface ResponseFunctionCallItem {
  type: 'function_call';
  id?: string;
  call_id: string;
  /** The namespace of the function called, when it is one of a `namespace` tool's. */
  namespace?: string;
  name: string;
  arguments: string;
  status?: ItemStatus;
}

export interface ResponseFunctionCallOutputItem {
  type: 'function_call_output';
  id?: string | null;
  call_id: string;
  output: string | Array<ResponseInputTextPart | ResponseInputImagePart | ResponseInputFilePart>;
  status?: ItemStatus | null;
}

export interface ResponseReasoningItem {
  type: 'reasoning';
  id?: string;
  summary?: Array<{ type: 'summary_text'; text: string }>;
  content?: Array<{ type: 'reasoning_text'; text: string }>;
  encrypted_content?: string | null;
  status?: ItemStatus;
}

/** Points at an item of an earlier response by id; the service resolves it before conversion. */
export interface ResponseItemReference {
  type?: 'item_reference' | null;
  id: string;
}

/** Function tools (alone or in a `namespace`) are converted; the others are typed by `type` so they can be named when left out or refused. */
export type ResponseTool = ResponseFunctionTool | { type: string; [field: string]: unknown };

export interface ResponseFunctionTool {
  type: 'function';
  name: string;
  description?: string | null;
  parameters?: Record<string, unknown> | null;
  strict?: boolean | null;
  defer_loading?: boolean;
  output_schema?: Record<string, unknown> | null;
}

export type ResponseToolChoice =
  | 'none'
  | 'auto'
  | 'required'
  | { type: 'function'; name: string }
  | { type: 'allowed_tools'; mode: 'auto' | 'required'; tools: Array<{ type: string; name?: string }> }
  | { type: string; [field: string]: unknown };

export interface ResponseTextConfig {
  format?: ResponseTextFormat;
  /** `low`, `medium` or `high` today; a chat request's own value is passed on as it came. */
  verbosity?: string | null;
}

export type ResponseTextFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; description?: string; strict?: boolean | null };

export interface ResponseReasoningConfig {
  effort?: string | null;
  summary?: 'auto' | 'concise' | 'detailed' | null;
  generate_summary?: 'auto' | 'concise' | 'detailed' | null;
}

/**
 * A request to a backend that keeps nothing (the ChatGPT Codex backend): it only streams, refuses
 * to store, and requires `instructions` (an empty string passes), so the whole conversation is in
 * `input`.
 */
export type StatelessResponsesRequest = ResponsesRequest & { instructions: string; input: ResponseInputItem[]; stream: true; store: false };

export type ResponseStatus = 'completed' | 'failed' | 'in_progress' | 'cancelled' | 'queued' | 'incomplete';

/** A Response's `usage` as the gateway writes it; what an upstream sends is read by responses-usage.ts. */
export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** An error as an upstream reports it in a Response or an `error` event. */
export interface ResponseError {
  type?: string;
  code?: string | null;
  message?: string;
  param?: string | null;
  /** On a ChatGPT plan's usage limit: when it resets (unix seconds), or in how many seconds. */
  resets_at?: number;
  resets_in_seconds?: number;
}

/** The Response an upstream's event carries; everything is optional, because it is the upstream's word. */
export interface StreamedResponse {
  id?: string;
  object?: 'response';
  created_at?: number;
  model?: string;
  status?: ResponseStatus;
  output?: StreamedOutputItem[];
  error?: ResponseError | null;
  incomplete_details?: { reason?: string } | null;
  /** Read by responsesUsage(), which checks each count. */
  usage?: unknown;
}

/** What a streamed Response's `output` holds; item types the gateway does not read are kept opaque. */
export type StreamedOutputItem = ResponseInputMessage | ResponseFunctionCallItem | ResponseReasoningItem | { type: string; id?: string };

/** The stream events the gateway reads; any other `type` is skipped. */
export type ResponseStreamEvent =
  | { type: 'response.created' | 'response.in_progress'; response?: StreamedResponse }
  | { type: 'response.completed' | 'response.incomplete' | 'response.failed'; response?: StreamedResponse }
  | { type: 'response.output_item.added' | 'response.output_item.done'; output_index?: number; item?: StreamedOutputItem }
  | { type: 'response.output_text.delta'; item_id?: string; output_index?: number; content_index?: number; delta?: string }
  | { type: 'response.refusal.delta'; item_id?: string; output_index?: number; content_index?: number; delta?: string }
  | { type: 'response.function_call_arguments.delta'; item_id?: string; output_index?: number; delta?: string }
  /** The spec puts the error's fields on the event; recorded streams also nest them under `error`. */
  | ({ type: 'error'; error?: ResponseError | null } & ResponseError);
