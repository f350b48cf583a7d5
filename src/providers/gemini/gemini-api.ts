/**
 * The parts of the Gemini API (generativelanguage.googleapis.com, v1beta) wire format the gateway
 * writes and reads. Field names are Gemini's REST (camelCase JSON) names.
 */

export const DEFAULT_GEMINI_BASE_URL = 'https://generativelanguage.googleapis.com/v1beta';

/**
 * `batchEmbedContents` refuses more than 100 requests ("at most 100 requests can be in one batch",
 * a recorded 400). Gemini documents no per-request token cap, only a per-input one that the gateway
 * already enforces, so the byte budget is only there to keep one request body reasonable.
 */
export const GEMINI_EMBEDDING_LIMITS = { maxInputs: 100, maxTokens: 1_000_000 };

export type GeminiRole = 'user' | 'model';

export interface GeminiFunctionCall {
  name?: string;
  args?: Record<string, unknown> | null;
}

export interface GeminiFunctionResponse {
  name: string;
  response: Record<string, unknown>;
}

export interface GeminiPart {
  text?: string;
  /** Set on parts that are thought summaries, not answer text. */
  thought?: boolean;
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  functionCall?: GeminiFunctionCall;
  functionResponse?: GeminiFunctionResponse;
}

export interface GeminiContent {
  role?: GeminiRole;
  parts?: GeminiPart[];
}

export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  /** Full JSON Schema, as OpenAI tools carry it; `parameters` only takes an OpenAPI subset. */
  parametersJsonSchema?: unknown;
}

export type GeminiFunctionCallingMode = 'AUTO' | 'ANY' | 'NONE';

export interface GeminiGenerationConfig {
  temperature?: number;
  topP?: number;
  maxOutputTokens?: number;
  stopSequences?: string[];
  candidateCount?: number;
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  responseMimeType?: string;
  responseJsonSchema?: unknown;
}

export interface GeminiGenerateContentRequest {
  contents: GeminiContent[];
  systemInstruction?: { parts: Array<{ text: string }> };
  tools?: Array<{ functionDeclarations: GeminiFunctionDeclaration[] }>;
  toolConfig?: { functionCallingConfig: { mode: GeminiFunctionCallingMode; allowedFunctionNames?: string[] } };
  generationConfig?: GeminiGenerationConfig;
}

export interface GeminiUsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
  cachedContentTokenCount?: number;
  totalTokenCount?: number;
}

export interface GeminiCandidate {
  content?: GeminiContent | null;
  finishReason?: string | null;
  index?: number;
}

export interface GeminiGenerateContentResponse {
  candidates?: GeminiCandidate[] | null;
  promptFeedback?: { blockReason?: string | null } | null;
  usageMetadata?: GeminiUsageMetadata | null;
  modelVersion?: string;
  responseId?: string;
  /** Sent inside a stream when it fails after it started. */
  error?: GeminiErrorObject | null;
}

export interface GeminiEmbedContentRequest {
  model: string;
  content: { parts: Array<{ text: string }> };
  outputDimensionality?: number;
}

export interface GeminiBatchEmbedContentsResponse {
  embeddings?: Array<{ values?: number[] }>;
  /** Only the newer embedding models report it. */
  usageMetadata?: { promptTokenCount?: number } | null;
}

/** One entry of `error.details` (google.rpc.Status details). */
export interface GeminiErrorDetail {
  '@type'?: string;
  reason?: string;
  retryDelay?: string;
}

export interface GeminiErrorObject {
  code?: number;
  message?: string;
  status?: string;
  details?: GeminiErrorDetail[];
}

export interface GeminiErrorBody {
  error?: GeminiErrorObject;
}
