import type { Usage } from '../../core/index.js';

/**
 * OpenAI's chat completions API (`POST /v1/chat/completions`): the request the gateway hands a
 * chat provider, the chunks and completions it answers with, and the parts the converters of the
 * other protocols write. What is read from an upstream stays `unknown` until a reader checks it.
 */

/** A chat completions request body, already validated, with gateway-only fields removed. */
export type ChatRequestBody = Record<string, unknown> & { model: string; messages: unknown[] };

export interface ChatCompletionResult {
  /** The `chat.completion` JSON to send to the client, as bytes. */
  payload: Uint8Array;
  usage: Usage | null;
  /** The generated text, used to estimate usage when the upstream reported none. */
  completionText(): string;
}

export interface ChatStreamEvent {
  /** One `chat.completion.chunk` as JSON, sent to the client as one `data:` line. */
  data: string;
  /** Usage carried by this chunk, if any. */
  usage: Usage | null;
  /** A chunk with usage and no choices: sent only to clients that asked for usage. */
  usageOnly: boolean;
  /** Generated text in this chunk, for estimating usage if the upstream never reports it. */
  text: string;
}

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type ChatUserPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: string } }
  /** A file (a PDF) inline as a data URL: OpenAI's `file` content part. */
  | { type: 'file'; file: { filename: string; file_data: string } };

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | ChatUserPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: ChatToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface ChatFunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

export type ChatToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

export type ChatFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

export interface ChatToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function: { name?: string; arguments: string };
}

export interface ChatDelta {
  role?: 'assistant';
  content?: string;
  refusal?: string;
  tool_calls?: ChatToolCallDelta[];
}

/** OpenAI's chat `usage` object, with the details its clients read. */
export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
  completion_tokens_details: { reasoning_tokens: number };
}

/** One `chat.completion.chunk`, as the gateway writes it. */
export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: Array<{ index: 0; delta: ChatDelta; logprobs: null; finish_reason: ChatFinishReason | null }>;
  usage?: ChatUsage;
}

/** One whole `chat.completion`, as the gateway writes it. */
export interface ChatCompletionPayload {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: Array<{
    index: 0;
    message: { role: 'assistant'; content: string | null; refusal: string | null; tool_calls?: ChatToolCall[] };
    logprobs: null;
    finish_reason: ChatFinishReason;
  }>;
  usage?: ChatUsage;
}
