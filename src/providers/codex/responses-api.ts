/**
 * The OpenAI Responses API as the ChatGPT Codex backend (`{base_url}/responses`) speaks it: the
 * request the gateway sends and the streamed events it reads. Only what the chat conversion uses
 * is typed; everything read from the wire is optional, because it is the upstream's word.
 */

export type ResponsesRole = 'user' | 'developer' | 'system';

export interface ResponsesInputText {
  type: 'input_text';
  text: string;
}

export interface ResponsesOutputText {
  type: 'output_text';
  text: string;
  annotations?: unknown[];
}

export interface ResponsesRefusal {
  type: 'refusal';
  refusal: string;
}

export type ResponsesImageDetail = 'low' | 'high' | 'auto';

export interface ResponsesInputImage {
  type: 'input_image';
  /** An http(s) URL or a base64 `data:` URL. */
  image_url: string;
  detail: ResponsesImageDetail;
}

/** A message the caller wrote (user turns, developer instructions). */
export interface ResponsesInputMessage {
  type: 'message';
  role: ResponsesRole;
  content: Array<ResponsesInputText | ResponsesInputImage>;
}

/** A message the model wrote: earlier assistant turns sent back, and the answer's message items. */
export interface ResponsesOutputMessage {
  type: 'message';
  role: 'assistant';
  id?: string;
  status?: ResponsesItemStatus;
  content: Array<ResponsesOutputText | ResponsesRefusal>;
}

export type ResponsesItemStatus = 'in_progress' | 'completed' | 'incomplete';

export interface ResponsesFunctionCall {
  type: 'function_call';
  /** The item's own id (`fc_…`); the events of a streamed call name it as `item_id`. */
  id?: string;
  /** What the function's output is matched by (`call_…`): the chat tool call's `id`. */
  call_id: string;
  name: string;
  /** JSON text, as the model wrote it. */
  arguments: string;
  status?: ResponsesItemStatus;
}

export interface ResponsesFunctionCallOutput {
  type: 'function_call_output';
  call_id: string;
  output: string;
}

export interface ResponsesReasoning {
  type: 'reasoning';
  id?: string;
  summary: Array<{ type: 'summary_text'; text: string }>;
  /** Only present when the request's `include` asked for `reasoning.encrypted_content`. */
  encrypted_content?: string | null;
}

export type ResponsesInputItem = ResponsesInputMessage | ResponsesOutputMessage | ResponsesFunctionCall | ResponsesFunctionCallOutput | ResponsesReasoning;

/** A function tool: flat, unlike chat completions' `{type, function: {…}}`. */
export interface ResponsesFunctionTool {
  type: 'function';
  name: string;
  description?: string;
  parameters: Record<string, unknown> | null;
  /** The Responses API's default is `true` (chat completions' is `false`): always sent. */
  strict: boolean;
}

export type ResponsesToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; name: string };

export type ResponsesTextFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; description?: string; strict: boolean };

export interface ResponsesTextControls {
  format?: ResponsesTextFormat;
  verbosity?: string;
}

export interface ResponsesRequest {
  model: string;
  /** The backend refuses a request without it (`Instructions are required`); an empty string passes. */
  instructions: string;
  input: ResponsesInputItem[];
  tools?: ResponsesFunctionTool[];
  tool_choice?: ResponsesToolChoice;
  parallel_tool_calls?: boolean;
  reasoning?: { effort: string };
  text?: ResponsesTextControls;
  /** The backend only streams. */
  stream: true;
  /** The backend refuses to store responses. */
  store: false;
  include?: string[];
  prompt_cache_key?: string;
}

export interface ResponsesUsage {
  input_tokens?: number;
  input_tokens_details?: { cached_tokens?: number } | null;
  output_tokens?: number;
  output_tokens_details?: { reasoning_tokens?: number } | null;
  total_tokens?: number;
}

export interface ResponsesError {
  type?: string;
  code?: string | null;
  message?: string;
  param?: string | null;
  /** On a ChatGPT plan's usage limit: when it resets (unix seconds), or in how many seconds. */
  resets_at?: number;
  resets_in_seconds?: number;
}

export type ResponsesStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed' | 'cancelled' | 'queued';

export interface ResponsesResponse {
  id?: string;
  object?: 'response';
  created_at?: number;
  model?: string;
  status?: ResponsesStatus;
  output?: ResponsesOutputItem[];
  error?: ResponsesError | null;
  incomplete_details?: { reason?: string } | null;
  usage?: ResponsesUsage | null;
}

/** What the answer's `output` holds; item types the chat conversion does not read are kept opaque. */
export type ResponsesOutputItem = ResponsesOutputMessage | ResponsesFunctionCall | ResponsesReasoning | { type: string; id?: string };

/** The streamed events the chat conversion reads; any other `type` is skipped. */
export type ResponsesStreamEvent =
  | { type: 'response.created' | 'response.in_progress'; response?: ResponsesResponse }
  | { type: 'response.completed' | 'response.incomplete' | 'response.failed'; response?: ResponsesResponse }
  | { type: 'response.output_item.added' | 'response.output_item.done'; output_index?: number; item?: ResponsesOutputItem }
  | { type: 'response.output_text.delta'; item_id?: string; output_index?: number; content_index?: number; delta?: string }
  | { type: 'response.refusal.delta'; item_id?: string; output_index?: number; content_index?: number; delta?: string }
  | { type: 'response.function_call_arguments.delta'; item_id?: string; output_index?: number; delta?: string }
  /** The spec puts the error's fields on the event; recorded streams also nest them under `error`. */
  | ({ type: 'error'; error?: ResponsesError | null } & ResponsesError);
