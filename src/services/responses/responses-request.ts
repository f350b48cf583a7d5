/**
 * The part of OpenAI's `POST /v1/responses` request (the `CreateResponse` schema of
 * github.com/openai/openai-openapi) that the gateway reads when it serves the Responses API over
 * an upstream that speaks only chat completions. Fields the conversion cannot honour are typed
 * too, so that it can name them when it refuses them. These types say what a valid body looks
 * like; the converters still check at run time the discriminators and fields they read, since a
 * client can send any `type`.
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
  status?: 'in_progress' | 'completed' | 'incomplete';
  phase?: string | null;
}

export type ResponseContentPart =
  | ResponseInputTextPart
  | ResponseInputImagePart
  | ResponseInputFilePart
  | ResponseOutputTextPart
  | ResponseRefusalPart;

export interface ResponseInputTextPart {
  type: 'input_text';
  text: string;
}

export interface ResponseInputImagePart {
  type: 'input_image';
  image_url?: string | null;
  file_id?: string | null;
  detail?: 'low' | 'high' | 'auto' | 'original' | null;
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
  status?: 'in_progress' | 'completed' | 'incomplete';
}

export interface ResponseFunctionCallOutputItem {
  type: 'function_call_output';
  id?: string | null;
  call_id: string;
  output: string | Array<ResponseInputTextPart | ResponseInputImagePart | ResponseInputFilePart>;
  status?: 'in_progress' | 'completed' | 'incomplete' | null;
}

export interface ResponseReasoningItem {
  type: 'reasoning';
  id?: string;
  summary?: Array<{ type: 'summary_text'; text: string }>;
  content?: Array<{ type: 'reasoning_text'; text: string }>;
  encrypted_content?: string | null;
  status?: 'in_progress' | 'completed' | 'incomplete';
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
  verbosity?: 'low' | 'medium' | 'high' | null;
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
