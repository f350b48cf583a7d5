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
import { JSON_ANSWER } from '../shared/json-guard.js';
import { UpstreamClient, type UpstreamRequest } from '../shared/upstream-client.js';
import { convertGeminiResponse } from './convert-gemini-response.js';
import { convertToGeminiRequest } from './convert-to-gemini-request.js';
import { DEFAULT_GEMINI_BASE_URL, GEMINI_EMBEDDING_LIMITS, type GeminiBatchEmbedContentsResponse, type GeminiEmbedContentRequest } from './gemini-api.js';
import { GENERATE_CONTENT_ANSWER } from './check-gemini-response.js';
import { GeminiChatEvents } from './gemini-chat-stream.js';
import { geminiErrorDialect } from './map-gemini-error.js';
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
    this.embeddingLimits = {
      ...GEMINI_EMBEDDING_LIMITS,
      maxInputs: readUpstreamKeys(endpoint, EMBEDDING_UPSTREAM_KEYS).max_embedding_inputs ?? GEMINI_EMBEDDING_LIMITS.maxInputs,
    };
    this.client = new UpstreamClient(endpoint.base_url ?? DEFAULT_GEMINI_BASE_URL, endpoint);
  }

  async chatCompletion(attempt: Attempt, call: ChatCall): Promise<ChatCompletionResult> {
    const body = JSON.stringify(convertToGeminiRequest(call.body));
    const { value } = await this.client.postJson(
      this.post(attempt, `${modelPath(call.body.model)}:generateContent`, body, call.cancellation),
      geminiErrorDialect,
      GENERATE_CONTENT_ANSWER,
    );
    const { completion, outputs } = convertGeminiResponse(value, call.body.model);
    return {
      payload: Buffer.from(JSON.stringify(completion)),
      usage: toUsage(completion.usage ?? null),
      completionText: () => outputs.map(generatedText).join(''),
    };
  }

  streamChatCompletion(attempt: Attempt, call: ChatCall): Promise<AsyncIterable<ChatStreamEvent>> {
    const body = JSON.stringify(convertToGeminiRequest(call.body));
    const request = this.post(attempt, `${modelPath(call.body.model)}:streamGenerateContent?alt=sse`, body, call.cancellation);
    return this.client.openEvents(request, geminiErrorDialect, new GeminiChatEvents(attempt.credential.id, call.body.model));
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
    const answer = await this.client.postJson(
      this.post(attempt, `${path}:batchEmbedContents`, JSON.stringify({ requests }), call.cancellation),
      geminiErrorDialect,
      JSON_ANSWER,
    );
    const parsed = answer.value as GeminiBatchEmbedContentsResponse;
    const embeddings = parsed.embeddings ?? [];
    // Gemini answers in request order and gives no index; a count mismatch means they cannot be matched up.
    if (embeddings.length !== call.inputs.length || embeddings.some((embedding) => !Array.isArray(embedding.values))) {
      throw new GatewayError(
        'upstream_invalid_response',
        `Upstream ${attempt.credential.id} returned ${embeddings.length} embeddings for ${call.inputs.length} inputs.`,
      );
    }
    const promptTokens = parsed.usageMetadata?.promptTokenCount;
    return { vectors: embeddings.map((embedding) => embedding.values as number[]), promptTokens: typeof promptTokens === 'number' ? promptTokens : null };
  }

  close(): Promise<void> {
    return this.client.close();
  }

  private post(attempt: Attempt, path: string, body: string, cancellation: AbortSignal): UpstreamRequest {
    return { path, method: 'POST', headers: this.headers.of(attempt.credential), body, cancellation, attempt };
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
