/**
 * The parts of Anthropic's Messages API (`POST /v1/messages`, version 2023-06-01) the gateway
 * writes and reads. Upstream fields are optional because a field missing from an answer must not
 * crash the conversion.
 */

export const ANTHROPIC_VERSION = '2023-06-01';
/** Anthropic requires `max_tokens`; OpenAI does not. This is what a request without one gets. */
export const DEFAULT_MAX_TOKENS = 4096;

// ---------------------------------------------------------------------------
// Request

export interface AnthropicTextBlock {
  type: 'text';
  text: string;
}

export interface AnthropicImageBlock {
  type: 'image';
  source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };
}

export interface AnthropicToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
}

export interface AnthropicToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content: string | AnthropicTextBlock[];
}

export type AnthropicContentBlock = AnthropicTextBlock | AnthropicImageBlock | AnthropicToolUseBlock | AnthropicToolResultBlock;

export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: AnthropicContentBlock[];
}

export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: unknown;
}

export type AnthropicToolChoice =
  | { type: 'auto' | 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

export interface AnthropicMessagesRequest {
  model: string;
  messages: AnthropicMessage[];
  max_tokens: number;
  system?: string;
  tools?: AnthropicTool[];
  tool_choice?: AnthropicToolChoice;
  temperature?: number;
  top_p?: number;
  stop_sequences?: string[];
  stream?: boolean;
  metadata?: { user_id: string };
}

// ---------------------------------------------------------------------------
// Response

export interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

export interface AnthropicResponseBlock {
  type?: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
}

export interface AnthropicMessageResponse {
  id?: string;
  type?: string;
  model?: string;
  content?: AnthropicResponseBlock[] | null;
  stop_reason?: string | null;
  usage?: AnthropicUsage | null;
}

export interface AnthropicErrorObject {
  type?: string;
  message?: string;
}

export interface AnthropicErrorBody {
  type?: string;
  error?: AnthropicErrorObject | null;
}

/** One `data:` payload of a stream; `type` says which of the fields are present. */
export interface AnthropicStreamEvent {
  type?: string;
  message?: AnthropicMessageResponse;
  index?: number;
  content_block?: AnthropicResponseBlock;
  delta?: { type?: string; text?: string; partial_json?: string; stop_reason?: string | null };
  usage?: AnthropicUsage | null;
  error?: AnthropicErrorObject | null;
}

// ---------------------------------------------------------------------------
// What a caller of the gateway's own `POST /v1/messages` sends and is answered

/**
 * A Messages request as a caller sends it: the API schema checks the fields it types (`model`,
 * `messages`, `max_tokens`, `stream`); everything else is read defensively where it is used, and
 * passed on untouched to an Anthropic upstream.
 */
export type MessagesRequestBody = Record<string, unknown> & { model: string; messages: unknown[] };

export type MessagesStopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal' | 'model_context_window_exceeded';

/** A message's `usage` as the gateway writes it: `input_tokens` excludes the cache reads and writes, as Anthropic's does. */
export interface MessagesUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number | null;
  cache_read_input_tokens: number | null;
}

export type MessageContentBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

/** A message the gateway makes of a chat upstream's answer, in the Messages API's shape. */
export interface MessageObject {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: MessageContentBlock[];
  stop_reason: MessagesStopReason | null;
  stop_sequence: string | null;
  usage: MessagesUsage;
}

/** One event of a Messages stream as the gateway writes it: `event: <event>\ndata: <data>\n\n`. */
export interface MessagesServerSentEvent {
  event: string;
  data: string;
}
