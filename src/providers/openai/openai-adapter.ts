import type { EndpointConfig } from '../../config/index.js';
import { GatewayError } from '../../errors/index.js';
import {
  capabilitiesOf,
  type Attempt,
  type Capabilities,
  type FullProvider,
  type ChatCall,
  type ChatCompletionResult,
  type ChatStreamEvent,
  type EmbeddingCall,
  type EmbeddingLimits,
  type EmbeddingResult,
  type ProviderAdapter,
  type ProviderFactory,
  type RerankCall,
  type RerankResult,
  type ResponsesCall,
  type ResponsesProvider,
  type ResponsesResult,
  type SpeechCall,
  type SpeechResult,
  type TranscriptEvents,
  type TranscriptionCall,
  type TranscriptionResult,
} from '../provider-adapter.js';
import { isObject, type JsonObject } from '../../core/index.js';
import { readWhole } from '../shared/body-chunks.js';
import { CredentialHeaders } from '../shared/credential-headers.js';
import { JSON_ANSWER, type JsonGuard } from '../shared/json-guard.js';
import { isEventStream } from '../shared/media-type.js';
import { multipartBody } from '../shared/multipart-body.js';
import { headerValue, UpstreamClient, type BufferedResponse, type UpstreamRequest } from '../shared/upstream-client.js';
import { OPENAI_EMBEDDING_LIMITS, type OpenAIChatCompletion, type OpenAICompatibleRerankResponse, type OpenAIEmbeddingResponse } from './openai-api.js';
import { openAIErrorDialect } from './map-openai-error.js';
import { readChatUsage } from '../../protocols/openai-chat/chat-usage.js';
import { generatedText } from './generated-text.js';
import { OpenAIChatEvents } from './openai-chat-stream.js';
import { CHAT_COMPLETION } from './check-chat-completion.js';
import { openAIEndpoints, type OpenAIEndpoints, type OpenAIOperation } from './openai-endpoints.js';
import { EMBEDDING_UPSTREAM_KEYS, readUpstreamKeys } from '../shared/upstream-keys.js';
import { ResponsesStreamTap } from '../shared/responses-stream-tap.js';
import { responsesUsage } from '../../protocols/openai-responses/responses-usage.js';

/**
 * Any OpenAI-compatible upstream: OpenAI itself, vLLM, Ollama, llama.cpp server, Groq, Together,
 * OpenRouter… Vendors differ only in `base_url`, `api_key` and extra `headers`. One adapter serves
 * an endpoint; the credential comes with each call.
 */
export class OpenAIAdapter implements ProviderAdapter, FullProvider, ResponsesProvider {
  readonly endpoint: string;
  readonly capabilities: Capabilities;
  /** Set when the endpoint's server speaks the Responses API (OpenAI-compatible ones; not Azure's deployment URLs). */
  readonly responses?: ResponsesProvider;
  readonly embeddingLimits: EmbeddingLimits;
  private readonly maxResponseBytes: number;
  private readonly client: UpstreamClient;
  private readonly headers: CredentialHeaders;
  /** Set when the server answered 404/405 at `/responses` (`responses: auto`); for this process's life. */
  private responsesMissing = false;

  constructor(
    endpoint: EndpointConfig,
    private readonly endpoints: OpenAIEndpoints = openAIEndpoints(endpoint),
  ) {
    this.endpoint = endpoint.name;
    this.capabilities = capabilitiesOf(this, endpoints.capabilities);
    this.embeddingLimits = {
      ...OPENAI_EMBEDDING_LIMITS,
      maxInputs: readUpstreamKeys(endpoint, EMBEDDING_UPSTREAM_KEYS).max_embedding_inputs ?? OPENAI_EMBEDDING_LIMITS.maxInputs,
    };
    this.client = new UpstreamClient(endpoints.baseUrl, endpoint);
    this.maxResponseBytes = endpoint.max_response_bytes;
    this.headers = new CredentialHeaders(endpoints.headers);
    if (endpoints.responses === 'passthrough' || endpoints.responses === 'auto') this.responses = this;
  }

  async chatCompletion(attempt: Attempt, call: ChatCall): Promise<ChatCompletionResult> {
    // The body passes through as bytes, but only once it is known to be a chat completion: a 2xx
    // with anything else (an HTML page, `null`, `{"choices":"x"}`) is the upstream failing.
    const { body: payload, value: completion } = await this.client.postJson(
      this.post(attempt, 'chat/completions', call.body.model, JSON.stringify(call.body), call.cancellation),
      openAIErrorDialect,
      CHAT_COMPLETION,
    );
    return { payload, usage: readChatUsage(completion.usage), completionText: () => completionText(completion) };
  }

  streamChatCompletion(attempt: Attempt, call: ChatCall): Promise<AsyncIterable<ChatStreamEvent>> {
    // Usage is always requested so it can be recorded; the gateway drops the usage chunk for clients that did not ask.
    const streamOptions = typeof call.body['stream_options'] === 'object' && call.body['stream_options'] !== null ? call.body['stream_options'] : {};
    const body = { ...call.body, stream: true, stream_options: { ...streamOptions, include_usage: true } };
    const request = this.post(attempt, 'chat/completions', call.body.model, JSON.stringify(body), call.cancellation);
    return this.client.openEvents(request, openAIErrorDialect, new OpenAIChatEvents(attempt.credential.id));
  }

  servesResponses(): boolean {
    return !this.responsesMissing;
  }

  /** The Responses API passed through: the body as given, the upstream's JSON or event stream back as bytes. */
  async createResponse(attempt: Attempt, call: ResponsesCall): Promise<ResponsesResult> {
    const request = this.post(attempt, 'responses', call.body.model, JSON.stringify(call.body), call.cancellation);
    try {
      if (!call.stream) {
        const { body: payload, value: parsed } = await this.client.postJson(request, openAIErrorDialect, RESPONSE_OBJECT);
        return { kind: 'json', payload, usage: responsesUsage(parsed['usage']), responseId: typeof parsed['id'] === 'string' ? parsed['id'] : null };
      }
      const response = await this.client.openBody(request, openAIErrorDialect, true);
      const tap = new ResponsesStreamTap(this.client.maxEventBytes);
      return { kind: 'stream', body: tap.tap(response.body), usage: () => tap.usage, responseId: () => tap.responseId };
    } catch (error) {
      this.noteResponsesMissing(error);
      throw error;
    }
  }

  async embed(attempt: Attempt, call: EmbeddingCall): Promise<EmbeddingResult> {
    const body = JSON.stringify({
      model: call.model,
      input: call.inputs,
      encoding_format: call.encodingFormat,
      ...(call.dimensions === undefined ? {} : { dimensions: call.dimensions }),
      ...(call.user === undefined ? {} : { user: call.user }),
    });
    const parsed = (await this.client.postJson(this.post(attempt, 'embeddings', call.model, body, call.cancellation), openAIErrorDialect, JSON_ANSWER))
      .value as OpenAIEmbeddingResponse;
    const vectors: Array<number[] | string | undefined> = Array.from({ length: call.inputs.length }, () => undefined);
    let placed = 0;
    for (const [position, item] of (parsed.data ?? []).entries()) {
      const index = item.index ?? position;
      // Each input gets exactly one vector: a repeated or out-of-range index is an answer we cannot trust.
      if (item.embedding === undefined || index < 0 || index >= vectors.length || vectors[index] !== undefined) {
        throw new GatewayError('upstream_invalid_response', `Upstream ${attempt.credential.id} returned a misplaced embedding (index ${index}).`);
      }
      vectors[index] = item.embedding;
      placed++;
    }
    if (placed !== call.inputs.length) {
      throw new GatewayError('upstream_invalid_response', `Upstream ${attempt.credential.id} returned ${placed} embeddings for ${call.inputs.length} inputs.`);
    }
    const promptTokens = parsed.usage?.prompt_tokens;
    return { vectors: vectors as Array<number[] | string>, promptTokens: typeof promptTokens === 'number' ? promptTokens : null };
  }

  /** OpenAI has no rerank API; OpenAI-compatible servers (vLLM, Infinity, …) serve the Jina/Cohere shape at `/rerank`. */
  async rerank(attempt: Attempt, call: RerankCall): Promise<RerankResult> {
    const body = JSON.stringify({
      model: call.model,
      query: call.query,
      documents: call.documents,
      ...(call.topN === undefined ? {} : { top_n: call.topN }),
      return_documents: false,
    });
    const parsed = (await this.client.postJson(this.post(attempt, 'rerank', call.model, body, call.cancellation), openAIErrorDialect, JSON_ANSWER))
      .value as OpenAICompatibleRerankResponse;
    const scores = (parsed.results ?? []).flatMap((result) => {
      const score = result.relevance_score ?? result.score;
      return typeof result.index === 'number' && typeof score === 'number' ? [{ index: result.index, score }] : [];
    });
    if (scores.length === 0) throw new GatewayError('upstream_invalid_response', `Upstream ${attempt.credential.id} returned no rerank results.`);
    const totalTokens = parsed.usage?.total_tokens;
    return { scores, totalTokens: typeof totalTokens === 'number' ? totalTokens : null };
  }

  async speak(attempt: Attempt, call: SpeechCall): Promise<SpeechResult> {
    const body = JSON.stringify({
      model: call.model,
      input: call.input,
      // OpenAI requires a voice; "alloy" is the one its documentation starts with.
      voice: call.voice ?? 'alloy',
      response_format: call.responseFormat,
      speed: call.speed,
      ...(call.instructions === undefined ? {} : { instructions: call.instructions }),
    });
    const response = await this.client.openBody(this.post(attempt, 'audio/speech', call.model, body, call.cancellation), openAIErrorDialect);
    return { audio: response.body };
  }

  /**
   * The upload is streamed from its file to the upstream. Asked to stream, the answer is read as
   * it comes: an event stream is handed on as such (gpt-4o-transcribe and its kind), anything else
   * (whisper-1 ignores `stream`) is read whole, within `max_response_bytes`, like any other answer.
   */
  async transcribe(attempt: Attempt, call: TranscriptionCall): Promise<TranscriptionResult | TranscriptEvents> {
    const request = this.audioUpload(attempt, 'audio/transcriptions', call);
    if (!call.stream) return audioAnswer(await this.client.requestOk(request, openAIErrorDialect));
    const response = await this.client.openBody(request, openAIErrorDialect);
    const contentType = headerValue(response.headers, 'content-type') ?? 'application/json';
    if (isEventStream(contentType)) return { events: response.body };
    return { contentType, body: await readWhole(response.body, this.maxResponseBytes, attempt.credential.id) };
  }

  async translate(attempt: Attempt, call: TranscriptionCall): Promise<TranscriptionResult> {
    return audioAnswer(await this.client.requestOk(this.audioUpload(attempt, 'audio/translations', call), openAIErrorDialect));
  }

  private audioUpload(attempt: Attempt, operation: 'audio/transcriptions' | 'audio/translations', call: TranscriptionCall): UpstreamRequest {
    const body = multipartBody([['model', call.model], ...call.fields], { field: 'file', ...call.file });
    return {
      path: this.endpoints.path(operation, call.model),
      method: 'POST',
      headers: {
        ...this.headers.of(attempt.credential),
        'content-type': body.contentType,
        'content-length': String(body.contentLength),
      },
      body: body.stream,
      cancellation: call.cancellation,
      attempt,
    };
  }

  close(): Promise<void> {
    return this.client.close();
  }

  private post(attempt: Attempt, operation: OpenAIOperation, model: string, body: string, cancellation: AbortSignal): UpstreamRequest {
    return { path: this.endpoints.path(operation, model), method: 'POST', headers: this.headers.of(attempt.credential), body, cancellation, attempt };
  }

  /**
   * A failed `/responses` call. With `responses: auto`, a 404 or 405 that is not about the model
   * (an unknown model is the caller's, and the chat call would say the same) means the server has
   * no Responses API: remembered, so that this request and the later ones are converted to chat.
   */
  private noteResponsesMissing(error: unknown): void {
    const status = error instanceof GatewayError ? error.upstream?.status : undefined;
    if (this.endpoints.responses === 'auto' && (status === 404 || status === 405) && !/model/i.test((error as GatewayError).message))
      this.responsesMissing = true;
  }
}

/** A Response object: a JSON object that says `object: response`, or has an `output` list. */
const RESPONSE_OBJECT: JsonGuard<JsonObject> = {
  expected: 'a Response object',
  test: (value): value is JsonObject => isObject(value) && (value['object'] === 'response' || Array.isArray(value['output'])),
};

function audioAnswer(response: BufferedResponse): TranscriptionResult {
  return { contentType: headerValue(response.headers, 'content-type') ?? 'application/json', body: response.body };
}

function completionText(completion: OpenAIChatCompletion): string {
  return (completion.choices ?? []).map((choice) => generatedText(choice.message)).join('');
}

export const createOpenAIAdapter: ProviderFactory = (endpoint) => new OpenAIAdapter(endpoint);
