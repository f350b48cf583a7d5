import type { EndpointConfig } from '../../config/index.js';
import { GatewayError } from '../../errors/index.js';
import type {
  Attempt,
  Capabilities,
  Credential,
  ChatCall,
  ChatCompletionResult,
  ChatProvider,
  ChatStreamEvent,
  EmbeddingCall,
  EmbeddingLimits,
  EmbeddingProvider,
  EmbeddingResult,
  ProviderAdapter,
  ProviderFactory,
} from '../provider-adapter.js';
import { CredentialHeaders } from '../shared/credential-headers.js';
import { UpstreamClient, type BufferedResponse } from '../shared/upstream-client.js';
import { convertGeminiResponse } from './convert-gemini-response.js';
import { convertToGeminiRequest } from './convert-to-gemini-request.js';
import {
  DEFAULT_GEMINI_BASE_URL,
  GEMINI_EMBEDDING_LIMITS,
  type GeminiBatchEmbedContentsResponse,
  type GeminiEmbedContentRequest,
} from './gemini-api.js';
import { isCompleteGenerateContentResponse } from './check-gemini-response.js';
import { readGeminiChatStream } from './gemini-chat-stream.js';
import { mapGeminiError } from './map-gemini-error.js';
import { toUsage } from './map-gemini-usage.js';
import { generatedText } from './read-gemini-candidate.js';
import { EMBEDDING_UPSTREAM_KEYS, readUpstreamKeys } from '../shared/upstream-keys.js';

/**
 * Google's Gemini API (generativelanguage.googleapis.com): chat through `generateContent` and
 * `streamGenerateContent`, converted from and to OpenAI's chat format, and embeddings through
 * `batchEmbedContents`.
 */
export class GeminiAdapter implements ProviderAdapter, ChatProvider, EmbeddingProvider {
  readonly endpoint: string;
  readonly capabilities: Capabilities = { chat: this, embedding: this };
  readonly embeddingLimits: EmbeddingLimits;
  private readonly client: UpstreamClient;
  private readonly headers = new CredentialHeaders(geminiHeaders);

  constructor(endpoint: EndpointConfig) {
    this.endpoint = endpoint.name;
    this.embeddingLimits = { ...GEMINI_EMBEDDING_LIMITS, maxInputs: readUpstreamKeys(endpoint, EMBEDDING_UPSTREAM_KEYS).max_embedding_inputs ?? GEMINI_EMBEDDING_LIMITS.maxInputs };
    this.client = new UpstreamClient(endpoint.base_url ?? DEFAULT_GEMINI_BASE_URL, endpoint);
  }

  async chatCompletion(attempt: Attempt, call: ChatCall): Promise<ChatCompletionResult> {
    const body = JSON.stringify(convertToGeminiRequest(call.body));
    const response = await this.postJson<unknown>(attempt, `${modelPath(call.body.model)}:generateContent`, body, call.cancellation);
    if (!isCompleteGenerateContentResponse(response)) throw new GatewayError('upstream_invalid_response', `Upstream ${attempt.credential.id} answered with a body that is not a GenerateContentResponse.`);
    const { completion, outputs } = convertGeminiResponse(response, call.body.model);
    return {
      payload: Buffer.from(JSON.stringify(completion)),
      usage: toUsage(completion.usage ?? null),
      completionText: () => outputs.map(generatedText).join(''),
    };
  }

  async streamChatCompletion(attempt: Attempt, call: ChatCall): Promise<AsyncIterable<ChatStreamEvent>> {
    const body = JSON.stringify(convertToGeminiRequest(call.body));
    const response = await this.client.openEventStream({
      path: `${modelPath(call.body.model)}:streamGenerateContent?alt=sse`,
      method: 'POST',
      headers: this.headers.of(attempt.credential),
      body,
      cancellation: call.cancellation,
      attempt,
    });
    if (!response.ok) throw this.error(response, attempt);
    return readGeminiChatStream(response.body, attempt.credential.id, call.body.model, this.client.maxEventBytes);
  }

  async embed(attempt: Attempt, call: EmbeddingCall): Promise<EmbeddingResult> {
    const path = modelPath(call.model);
    const requests: GeminiEmbedContentRequest[] = call.inputs.map((input, index) => {
      if (typeof input !== 'string') {
        throw new GatewayError('upstream_bad_request', 'Gemini embeds text only; token arrays are not supported.', { param: `input[${index}]` });
      }
      return {
        model: path.slice(1),
        content: { parts: [{ text: input }] },
        ...(call.dimensions === undefined ? {} : { outputDimensionality: call.dimensions }),
      };
    });
    const parsed = await this.postJson<GeminiBatchEmbedContentsResponse>(attempt, `${path}:batchEmbedContents`, JSON.stringify({ requests }), call.cancellation);
    const embeddings = parsed.embeddings ?? [];
    // Gemini answers in request order and gives no index; a count mismatch means they cannot be matched up.
    if (embeddings.length !== call.inputs.length || embeddings.some((embedding) => !Array.isArray(embedding.values))) {
      throw new GatewayError('upstream_invalid_response', `Upstream ${attempt.credential.id} returned ${embeddings.length} embeddings for ${call.inputs.length} inputs.`);
    }
    const promptTokens = parsed.usageMetadata?.promptTokenCount;
    return { vectors: embeddings.map((embedding) => embedding.values as number[]), promptTokens: typeof promptTokens === 'number' ? promptTokens : null };
  }

  close(): Promise<void> {
    return this.client.close();
  }

  private async postJson<T>(attempt: Attempt, path: string, body: string, cancellation: AbortSignal): Promise<T> {
    const response = await this.client.requestBuffered({ path, method: 'POST', headers: this.headers.of(attempt.credential), body, cancellation, attempt });
    if (response.statusCode < 200 || response.statusCode >= 300) throw this.error(response, attempt);
    try {
      return JSON.parse(response.body.toString('utf8')) as T;
    } catch {
      throw new GatewayError('upstream_invalid_response', `Upstream ${attempt.credential.id} answered with a body that is not JSON.`);
    }
  }

  private error(response: BufferedResponse, attempt: Attempt): GatewayError {
    return mapGeminiError(response.statusCode, response.body.toString('utf8'), response.headers, attempt.credential.id);
  }
}

function geminiHeaders(credential: Credential): Record<string, string> {
  return {
    'content-type': 'application/json',
    // The header rather than `?key=`: query strings end up in access logs.
    ...(credential.apiKey ? { 'x-goog-api-key': credential.apiKey } : {}),
    ...credential.headers,
  };
}

/**
 * The resource path of a model: `gemini-2.5-flash` is `/models/gemini-2.5-flash`; a name that
 * already has its collection (`models/…`, `tunedModels/…`) is kept.
 */
function modelPath(model: string): string {
  const name = model.includes('/') ? model : `models/${model}`;
  return `/${name.split('/').map(encodeURIComponent).join('/')}`;
}

export const createGeminiAdapter: ProviderFactory = (endpoint) => new GeminiAdapter(endpoint);
