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
import { CredentialHeaders } from '../shared/credential-headers.js';
import { multipartBody } from '../shared/multipart-body.js';
import { headerValue, UpstreamClient, type BufferedResponse, type UpstreamRequest } from '../shared/upstream-client.js';
import { OPENAI_EMBEDDING_LIMITS, type OpenAIChatCompletion, type OpenAICompatibleRerankResponse, type OpenAIEmbeddingResponse } from './openai-api.js';
import { mapOpenAIError } from './map-openai-error.js';
import { generatedText, mapOpenAIUsage } from './map-openai-usage.js';
import { readOpenAIChatStream } from './openai-chat-stream.js';
import { parseChatCompletion } from './parse-chat-completion.js';
import { openAIEndpoints, type OpenAIEndpoints, type OpenAIOperation } from './openai-endpoints.js';
import { EMBEDDING_UPSTREAM_KEYS, readUpstreamKeys } from '../shared/upstream-keys.js';
import { ResponsesStreamTap } from '../shared/responses-stream-tap.js';
import { isObject, responsesUsage } from '../../protocols/openai-responses/responses-usage.js';

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
    this.embeddingLimits = { ...OPENAI_EMBEDDING_LIMITS, maxInputs: readUpstreamKeys(endpoint, EMBEDDING_UPSTREAM_KEYS).max_embedding_inputs ?? OPENAI_EMBEDDING_LIMITS.maxInputs };
    this.client = new UpstreamClient(endpoints.baseUrl, endpoint);
    this.maxResponseBytes = endpoint.max_response_bytes;
    this.headers = new CredentialHeaders(endpoints.headers);
    if (endpoints.responses === 'passthrough' || endpoints.responses === 'auto') this.responses = this;
  }

  async chatCompletion(attempt: Attempt, call: ChatCall): Promise<ChatCompletionResult> {
    const response = await this.client.requestBuffered(this.post(attempt, 'chat/completions', call.body.model, JSON.stringify(call.body), call.cancellation));
    if (response.statusCode < 200 || response.statusCode >= 300) throw this.error(response, attempt);
    // The body passes through as bytes, but only once it is known to be a chat completion: a 2xx
    // with anything else (an HTML page, `null`, `{"choices":"x"}`) is the upstream failing.
    const payload = response.body;
    const completion = parseChatCompletion(payload);
    if (completion === null) throw new GatewayError('upstream_invalid_response', `Upstream ${attempt.credential.id} answered with a body that is not a chat completion.`);
    return { payload, usage: mapOpenAIUsage(completion.usage), completionText: () => completionText(completion) };
  }

  async streamChatCompletion(attempt: Attempt, call: ChatCall): Promise<AsyncIterable<ChatStreamEvent>> {
    // Usage is always requested so it can be recorded; the gateway drops the usage chunk for clients that did not ask.
    const streamOptions = typeof call.body['stream_options'] === 'object' && call.body['stream_options'] !== null ? call.body['stream_options'] : {};
    const body = { ...call.body, stream: true, stream_options: { ...streamOptions, include_usage: true } };
    const response = await this.client.openEventStream(this.post(attempt, 'chat/completions', call.body.model, JSON.stringify(body), call.cancellation));
    if (!response.ok) throw this.error(response, attempt);
    return readOpenAIChatStream(response.body, attempt.credential.id, this.client.maxEventBytes);
  }

  servesResponses(): boolean {
    return !this.responsesMissing;
  }

  /** The Responses API passed through: the body as given, the upstream's JSON or event stream back as bytes. */
  async createResponse(attempt: Attempt, call: ResponsesCall): Promise<ResponsesResult> {
    const request = this.post(attempt, 'responses', call.body.model, JSON.stringify(call.body), call.cancellation);
    if (!call.stream) {
      const response = await this.client.requestBuffered(request);
      if (response.statusCode < 200 || response.statusCode >= 300) throw this.responsesError(response, attempt);
      const parsed = parseResponse(response.body);
      if (parsed === null) throw new GatewayError('upstream_invalid_response', `Upstream ${attempt.credential.id} answered with a body that is not a Response object.`);
      return { kind: 'json', payload: response.body, usage: responsesUsage(parsed['usage']), responseId: typeof parsed['id'] === 'string' ? parsed['id'] : null };
    }
    const response = await this.client.openEventStream(request);
    if (!response.ok) throw this.responsesError(response, attempt);
    const tap = new ResponsesStreamTap(this.client.maxEventBytes);
    return { kind: 'stream', body: tap.tap(response.body), usage: () => tap.usage, responseId: () => tap.responseId };
  }

  async embed(attempt: Attempt, call: EmbeddingCall): Promise<EmbeddingResult> {
    const body = JSON.stringify({
      model: call.model,
      input: call.inputs,
      encoding_format: call.encodingFormat,
      ...(call.dimensions === undefined ? {} : { dimensions: call.dimensions }),
      ...(call.user === undefined ? {} : { user: call.user }),
    });
    const parsed = await this.postJson<OpenAIEmbeddingResponse>(attempt, this.post(attempt, 'embeddings', call.model, body, call.cancellation));
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
    const parsed = await this.postJson<OpenAICompatibleRerankResponse>(attempt, this.post(attempt, 'rerank', call.model, body, call.cancellation));
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
    const response = await this.client.openStream(this.post(attempt, 'audio/speech', call.model, body, call.cancellation));
    if (!response.ok) throw this.error(response, attempt);
    return { audio: response.body };
  }

  /**
   * The upload is streamed from its file to the upstream. Asked to stream, the answer is read as
   * it comes: an event stream is handed on as such (gpt-4o-transcribe and its kind), anything else
   * (whisper-1 ignores `stream`) is read whole, within `max_response_bytes`, like any other answer.
   */
  async transcribe(attempt: Attempt, call: TranscriptionCall): Promise<TranscriptionResult | TranscriptEvents> {
    const request = this.audioUpload(attempt, 'audio/transcriptions', call);
    if (!call.stream) return this.audioAnswer(attempt, await this.client.requestBuffered(request));
    const response = await this.client.openStream(request);
    if (!response.ok) throw this.error(response, attempt);
    const contentType = headerValue(response.headers, 'content-type') ?? 'application/json';
    if (contentType.trimStart().toLowerCase().startsWith('text/event-stream')) return { events: response.body };
    return { contentType, body: await readWhole(response.body, this.maxResponseBytes, attempt.credential.id) };
  }

  async translate(attempt: Attempt, call: TranscriptionCall): Promise<TranscriptionResult> {
    return this.audioAnswer(attempt, await this.client.requestBuffered(this.audioUpload(attempt, 'audio/translations', call)));
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

  private audioAnswer(attempt: Attempt, response: BufferedResponse): TranscriptionResult {
    if (response.statusCode < 200 || response.statusCode >= 300) throw this.error(response, attempt);
    return { contentType: headerValue(response.headers, 'content-type') ?? 'application/json', body: response.body };
  }

  close(): Promise<void> {
    return this.client.close();
  }

  private async postJson<T>(attempt: Attempt, request: UpstreamRequest): Promise<T> {
    const response = await this.client.requestBuffered(request);
    if (response.statusCode < 200 || response.statusCode >= 300) throw this.error(response, attempt);
    try {
      return JSON.parse(response.body.toString('utf8')) as T;
    } catch {
      throw new GatewayError('upstream_invalid_response', `Upstream ${attempt.credential.id} answered with a body that is not JSON.`);
    }
  }

  private post(attempt: Attempt, operation: OpenAIOperation, model: string, body: string, cancellation: AbortSignal): UpstreamRequest {
    return { path: this.endpoints.path(operation, model), method: 'POST', headers: this.headers.of(attempt.credential), body, cancellation, attempt };
  }

  /**
   * A failed `/responses` call. With `responses: auto`, a 404 or 405 that is not about the model
   * (an unknown model is the caller's, and the chat call would say the same) means the server has
   * no Responses API: remembered, so that this request and the later ones are converted to chat.
   */
  private responsesError(response: BufferedResponse, attempt: Attempt): GatewayError {
    const error = this.error(response, attempt);
    if (this.endpoints.responses === 'auto' && (response.statusCode === 404 || response.statusCode === 405) && !/model/i.test(error.message)) this.responsesMissing = true;
    return error;
  }

  private error(response: BufferedResponse, attempt: Attempt): GatewayError {
    return mapOpenAIError(response.statusCode, response.body.toString('utf8'), response.headers, attempt.credential.id);
  }
}

/** A Response object, or null when the body is not one (a JSON object that says `object: response`, or has an `output` list). */
function parseResponse(payload: Buffer): Record<string, unknown> | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload.toString('utf8'));
  } catch {
    return null;
  }
  return isObject(parsed) && (parsed['object'] === 'response' || Array.isArray(parsed['output'])) ? parsed : null;
}

/** A streamed body read whole, as `requestBuffered` would, failing past the endpoint's cap. */
async function readWhole(body: AsyncIterableIterator<Buffer>, maxBytes: number, credentialId: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > maxBytes) throw new GatewayError('upstream_invalid_response', `Upstream ${credentialId} answered with more than ${maxBytes} bytes (max_response_bytes).`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

function completionText(completion: OpenAIChatCompletion): string {
  return (completion.choices ?? []).map((choice) => generatedText(choice.message)).join('');
}

export const createOpenAIAdapter: ProviderFactory = (endpoint) => new OpenAIAdapter(endpoint);
