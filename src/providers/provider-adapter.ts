import type { IncomingHttpHeaders } from 'node:http';
import type { TProperties } from '@sinclair/typebox';
import type { EndpointConfig, ModelType, UpstreamConfig } from '../config/index.js';
import type { Usage } from '../core/index.js';
import type { ChatCompletionResult, ChatRequestBody, ChatStreamEvent } from '../protocols/openai-chat/chat-types.js';
import type { ResponseStreamEvent, StatelessResponsesRequest } from '../protocols/openai-responses/responses-types.js';

export type { Usage } from '../core/index.js';
// The chat protocol's types are the contract's words for a chat call; they live with the protocol.
export type { ChatCompletionResult, ChatRequestBody, ChatStreamEvent } from '../protocols/openai-chat/chat-types.js';

/**
 * The contract between the gateway's core and every provider. Core code imports only this file;
 * provider folders implement it and are wired in by the composition root (src/gateway.ts, through
 * providers/registry.ts).
 */

/**
 * One upstream credential: what routing chooses. An adapter serves an endpoint and is handed the
 * credential on every call, so that many credentials share one adapter and its connection pool,
 * and a credential rotated at run time (a new object) needs no new adapter.
 */
export interface Credential {
  /** The entry's id (`upstreams[].id`): in logs, the request log and error messages. */
  readonly id: string;
  /** The secret, placed where the provider wants it (a Bearer token, `x-api-key`, `api-key`…). */
  readonly apiKey: string | undefined;
  /** Extra headers this credential sends (an organisation, a project, a referer…). */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * An OAuth account behind the credential (a ChatGPT subscription: provider `codex`): its tokens
   * are kept fresh by the provider that made it, which alone reads them.
   */
  readonly account?: CredentialAccount;
}

/** What the gateway's core sees of an OAuth account: what operators are shown. */
export interface CredentialAccount {
  /** The account as the admin API shows it: the upstream's account id, plan, last refresh, quota as last reported. Never a token. */
  describe(): Readonly<Record<string, unknown>>;
  /** Reads its document again: another process changed it (new tokens after a refresh there). */
  reload(): Promise<void>;
  /** The quota windows the upstream last reported (`primary`, `secondary`), each the share used (0–1); empty before its first answer. */
  quotaUse(): ReadonlyArray<{ readonly window: string; readonly usedRatio: number }>;
  /** When its access token expires (ms since the epoch); null when it does not say. */
  tokenExpiresAt(): number | null;
}

/**
 * Where an OAuth account's document (a Codex auth.json) lives: its file, or, for an account added
 * at run time, the database, sealed under the gateway's secret key. The provider reads it when the
 * tokens may have changed elsewhere and writes it after a refresh.
 */
export interface AccountDocument {
  /** Names it in logs and the admin API (a path, `database`), never its contents. */
  readonly description: string;
  read(): Promise<string>;
  write(text: string): Promise<void>;
}

/**
 * What a provider whose credentials are OAuth accounts gets from the gateway: a lock shared by
 * every gateway process on the same state (a refresh token may be spent once), and a log.
 */
export interface AccountContext {
  /**
   * Runs `task` while holding the lock `name` in every gateway process sharing `state.url`, renewed
   * while it runs. A waiter waits at least `waitMs` (and at least what a dead holder's lease takes to
   * run out). Rejects without running `task` when the lock cannot be taken: the message says why
   * (the shared state is unavailable, or the lock stayed taken).
   */
  exclusive<T>(name: string, task: (lock: AccountLock) => Promise<T>, options?: { waitMs?: number }): Promise<T>;
  /** Notable account events (a refresh, a token written back, a refresh refused): one log line each. */
  note(level: 'info' | 'warn', fields: Readonly<Record<string, unknown>>, message: string): void;
}

/** The lock an account's task holds. */
export interface AccountLock {
  /**
   * Renews it now; rejects when it is no longer this holder's (its lease ran out, another holder
   * may have it) or the state cannot say. Asked before spending something that works once.
   */
  confirm(): Promise<void>;
}

/** The head of an upstream's answer; its headers are parsed only if read. */
export interface AnswerHead {
  readonly headers: IncomingHttpHeaders;
}

/** One try of one credential, as the router hands it to an adapter. */
export interface Attempt {
  readonly credential: Credential;
  /** The W3C trace context of this attempt's span, sent upstream as `traceparent`; null while tracing is off. */
  readonly traceparent?: string | null;
  /**
   * Told of the upstream's answer when its head arrives, whatever its status: the router reads a
   * credential's rate-limit state from successful answers too.
   */
  answered(statusCode: number, head: AnswerHead): void;
}

export interface ChatCall {
  body: ChatRequestBody;
  /** Cancelled when the client goes away; adapters stop the upstream request. */
  cancellation: AbortSignal;
}

export type EncodingFormat = 'float' | 'base64';

export interface EmbeddingCall {
  /** The model name the upstream knows. */
  model: string;
  /** At most `embeddingLimits.maxInputs` of them; the gateway batches larger requests. */
  inputs: ReadonlyArray<string | readonly number[]>;
  /** What the client asked for; an adapter may answer in the other format, the gateway converts. */
  encodingFormat: EncodingFormat;
  dimensions?: number;
  user?: string;
  cancellation: AbortSignal;
}

export interface EmbeddingResult {
  /** One per input, in input order: floats, or base64 of little-endian float32. */
  vectors: Array<number[] | string>;
  /** Tokens the upstream counted; null when it does not say. */
  promptTokens: number | null;
}

export interface EmbeddingLimits {
  maxInputs: number;
  /** Per upstream request; the gateway counts UTF-8 bytes against it, an upper bound on tokens. */
  maxTokens: number;
}

export interface RerankCall {
  model: string;
  query: string;
  documents: readonly string[];
  /** A hint: the gateway sorts and cuts the results itself. */
  topN?: number;
  cancellation: AbortSignal;
}

export interface RerankResult {
  /** A score for some or all documents, in any order; `index` is the document's position. */
  scores: Array<{ index: number; score: number }>;
  totalTokens: number | null;
}

export interface SpeechCall {
  model: string;
  input: string;
  voice: string | undefined;
  responseFormat: string;
  speed: number;
  instructions?: string;
  cancellation: AbortSignal;
}

export interface SpeechResult {
  /** The audio as it arrives from the upstream. */
  audio: AsyncIterableIterator<Buffer>;
}

export interface TranscriptionCall {
  model: string;
  /** The upload, spooled to disk by the gateway; `filename` already carries the right extension. */
  file: { path: string; size: number; filename: string; contentType: string };
  /** The form's other fields, as sent (language, prompt, response_format, temperature, stream, …). */
  fields: ReadonlyArray<readonly [string, string]>;
  /**
   * The caller asked for `stream=true`: an upstream that streams answers its own event stream
   * (`TranscriptEvents`); one that does not answers the whole transcript, as always.
   */
  stream: boolean;
  cancellation: AbortSignal;
}

/** A whole transcript (or translation), in the asked response_format. */
export interface TranscriptionResult {
  contentType: string;
  body: Buffer;
}

/** An upstream's own transcript event stream (`transcript.text.delta`, `transcript.text.done`), as bytes. */
export interface TranscriptEvents {
  /** The upstream's bytes as they arrive. Iterating may throw a GatewayError if the upstream fails mid-stream. */
  events: AsyncIterableIterator<Buffer>;
}

/** A model an upstream offers by itself, without being listed in the config's `models`. */
export interface PublishedModel {
  id: string;
  type: ModelType;
}

/** A model an upstream would offer by itself but cannot here: said at start, never hidden. */
export interface OffModel {
  id: string;
  type: ModelType;
  /** Why, in words an operator acts on: "pocketsphinx is not installed". */
  reason: string;
  /** The one thing that turns it on. */
  remedy: string;
}

export interface ChatProvider {
  /** Resolves with the upstream's completion or rejects with a GatewayError. */
  chatCompletion(attempt: Attempt, call: ChatCall): Promise<ChatCompletionResult>;
  /**
   * Resolves once the upstream accepted the stream (status 200); rejects with a GatewayError
   * otherwise. Iterating may throw a GatewayError if the upstream fails mid-stream.
   */
  streamChatCompletion(attempt: Attempt, call: ChatCall): Promise<AsyncIterable<ChatStreamEvent>>;
}

export interface EmbeddingProvider {
  readonly embeddingLimits: EmbeddingLimits;
  embed(attempt: Attempt, call: EmbeddingCall): Promise<EmbeddingResult>;
}

export interface RerankProvider {
  rerank(attempt: Attempt, call: RerankCall): Promise<RerankResult>;
}

export interface SpeechProvider {
  /** Resolves once the upstream accepted the request. */
  speak(attempt: Attempt, call: SpeechCall): Promise<SpeechResult>;
}

/** A native (Responses API) call passed through as the client sent it. */
export interface NativeCall {
  /** The request body exactly as received: still compressed when it came so (`content-encoding` is in `headers`). */
  body: Buffer;
  /** The client's headers the upstream may see (the service's allow-list), lower-case names; never an authorization. */
  headers: Readonly<Record<string, string>>;
  cancellation: AbortSignal;
}

export interface NativeResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  /** The upstream's bytes as they arrive, unchanged. */
  body: AsyncIterableIterator<Buffer>;
  /** The usage the stream reported (read as it passed), once its final event went by; null before or without one. */
  usage(): Usage | null;
}

export interface NativeProvider {
  /**
   * Resolves once the upstream accepted the call (2xx), its body unread; rejects with a
   * classified GatewayError otherwise (after renewing an OAuth token once on a 401).
   */
  openNative(attempt: Attempt, call: NativeCall): Promise<NativeResponse>;
}

/**
 * A Responses API call (`POST /v1/responses`) passed to an upstream that speaks that API itself:
 * the body the client sent, already checked, with `model` set to the upstream's name and the
 * gateway's own fields (session metadata, a conversation it stored) taken care of.
 */
export interface ResponsesCall {
  body: Record<string, unknown> & { model: string };
  /** Whether the client asked for a stream (`body.stream === true`); an adapter answers in the same form. */
  stream: boolean;
  cancellation: AbortSignal;
}

/** A non-streamed answer: the upstream's Response JSON as bytes, to send on unchanged. */
export interface ResponsesPayload {
  readonly kind: 'json';
  readonly payload: Buffer;
  /** The Response's `usage`; null when it had none. */
  readonly usage: Usage | null;
  /** The Response's `id`; null when it had none. */
  readonly responseId: string | null;
}

/** A streamed answer: the upstream's Server-Sent Events, as bytes, unchanged. */
export interface ResponsesEventBytes {
  readonly kind: 'stream';
  /** The upstream's bytes as they arrive. Iterating may throw a GatewayError if the upstream fails mid-stream. */
  readonly body: AsyncIterableIterator<Buffer>;
  /** The usage of the event that ends the response (`response.completed`, `.incomplete`, `.failed`), once it went by; null before or without one. */
  usage(): Usage | null;
  /** The response's id, once an event carrying it (`response.created`) went by; null before. */
  responseId(): string | null;
}

export type ResponsesResult = ResponsesPayload | ResponsesEventBytes;

export interface ResponsesProvider {
  /**
   * Resolves once the upstream accepted the call (a 2xx: for a stream, an event stream; for JSON,
   * the whole body, which must be a JSON object); rejects with a classified GatewayError otherwise.
   */
  createResponse(attempt: Attempt, call: ResponsesCall): Promise<ResponsesResult>;
  /**
   * False once the upstream showed it has no Responses API (it answered 404 or 405 at its
   * address): `/v1/responses` is converted to chat for it from then on, the request that found out
   * included. Always true when absent.
   */
  servesResponses?(): boolean;
}

/**
 * A Responses API call to an upstream that speaks it but keeps nothing (ChatGPT accounts: it only
 * streams, and refuses to store): the gateway resolves and stores the conversation itself, and
 * sends the whole of it.
 */
export interface StatelessResponsesCall {
  body: StatelessResponsesRequest;
  cancellation: AbortSignal;
}

export interface StatelessResponsesProvider {
  /**
   * The upstream's events, parsed, up to the one that ends the response (`response.completed` or
   * `.incomplete`). Resolves once the upstream accepted the call; a refusal, a failure it reports
   * in the stream and a stream cut short are thrown as classified GatewayErrors.
   */
  streamResponse(attempt: Attempt, call: StatelessResponsesCall): Promise<AsyncIterable<ResponseStreamEvent>>;
}

/**
 * A Messages API call (`POST /v1/messages`) passed to an upstream that speaks it itself
 * (anthropic): the caller's body as it came, with only `model` set to the route's name.
 */
export interface MessagesCall {
  body: Uint8Array;
  /** Whether the client asked for a stream; an adapter answers in the same form. */
  stream: boolean;
  /** The caller's `anthropic-version` and `anthropic-beta`, lower-case names, when it sent them. */
  headers: Readonly<Record<string, string>>;
  cancellation: AbortSignal;
}

/** A non-streamed answer: the upstream's message JSON as bytes, to send on unchanged. */
export interface MessagesPayload {
  readonly kind: 'json';
  readonly payload: Buffer;
  /** The message's `usage`; null when it had none. */
  readonly usage: Usage | null;
}

/** A streamed answer: the upstream's Server-Sent Events, as bytes, unchanged. */
export interface MessagesEventBytes {
  readonly kind: 'stream';
  /** The upstream's bytes as they arrive. Iterating may throw a GatewayError if the upstream fails mid-stream. */
  readonly body: AsyncIterableIterator<Buffer>;
  /** The usage `message_start` and `message_delta` reported, once they went by; null before. */
  usage(): Usage | null;
}

export type MessagesResult = MessagesPayload | MessagesEventBytes;

export interface MessagesProvider {
  /**
   * Resolves once the upstream accepted the call (a 2xx: for a stream, an event stream; for JSON,
   * the whole body, which must be a message); rejects with a classified GatewayError otherwise.
   */
  createMessage(attempt: Attempt, call: MessagesCall): Promise<MessagesResult>;
  /** `POST /v1/messages/count_tokens` passed on: the upstream's JSON answer as bytes. */
  countTokens(attempt: Attempt, call: Omit<MessagesCall, 'stream'>): Promise<Buffer>;
}

export interface TranscriptionProvider {
  transcribe(attempt: Attempt, call: TranscriptionCall): Promise<TranscriptionResult | TranscriptEvents>;
  /**
   * Speech in any language to English text (`POST /v1/audio/translations`), where the upstream
   * has it (OpenAI's, Azure's and OpenAI-compatible APIs); absent where it has not. Never streams.
   */
  translate?(attempt: Attempt, call: TranscriptionCall): Promise<TranscriptionResult>;
}

/** What a route of a model of each type calls. */
export interface CapabilityOf {
  chat: ChatProvider;
  embedding: EmbeddingProvider;
  rerank: RerankProvider;
  speech: SpeechProvider;
  transcription: TranscriptionProvider;
}

/** An adapter's capabilities by model type: a service can only call what is here. */
export type Capabilities = { readonly [Type in ModelType]?: CapabilityOf[Type] };

/** Every capability at once: adapters for servers that may serve any of them (OpenAI-compatible, local). */
export type FullProvider = ChatProvider & EmbeddingProvider & RerankProvider & SpeechProvider & TranscriptionProvider;

/** The capabilities of `provider` limited to `types`: what this particular server serves. */
export function capabilitiesOf(provider: FullProvider, types: Iterable<ModelType>): Capabilities {
  const capabilities: { -readonly [Type in ModelType]?: CapabilityOf[Type] } = {};
  for (const type of types) capabilities[type] = provider;
  return capabilities;
}

/** Serves one endpoint (config/upstream-endpoints.ts) for every credential routed to it. */
export interface ProviderAdapter {
  /** The endpoint's name, for logs. */
  readonly endpoint: string;
  /** What this adapter serves; the catalog refuses at start a model routed to one without its type. */
  readonly capabilities: Capabilities;
  /** The native passthrough (`/v1/native/responses`): adapters of OAuth accounts (codex). */
  readonly native?: NativeProvider;
  /**
   * The Responses API spoken by the upstream itself (`/v1/responses` passed through): adapters of
   * servers that serve it. Chat routes without it serve `/v1/responses` by conversion to chat.
   */
  readonly responses?: ResponsesProvider;
  /**
   * The Responses API sent as such to an upstream that keeps nothing (codex): `/v1/responses` on
   * its routes is neither passed through nor converted to chat; the gateway keeps the conversation.
   */
  readonly statelessResponses?: StatelessResponsesProvider;
  /**
   * The Messages API spoken by the upstream itself (`/v1/messages` passed through): anthropic.
   * Chat routes without it serve `/v1/messages` by conversion to chat.
   */
  readonly messages?: MessagesProvider;
  /** Models this endpoint offers by itself (the built-in `local` provider); the catalog adds those the config does not define. */
  publishedModels?(): readonly PublishedModel[];
  /** Models it would publish but cannot on this machine (a missing engine). */
  offModels?(): readonly OffModel[];
  /**
   * Work done once before the gateway listens, so that no caller waits for it (the local
   * provider's word-vector conversion). Says what it does through `progress`; never throws: what
   * it could not do is said, and done on first use instead.
   */
  prepare?(progress: PreparationProgress): Promise<void>;
  close(): Promise<void>;
}

/** Where an adapter's start-up preparation is told: the gateway's log. */
export interface PreparationProgress {
  info(message: string): void;
  warn(message: string): void;
}

export type ProviderFactory = (endpoint: EndpointConfig) => ProviderAdapter;

/** What a provider folder gives the registry: the schema of its own upstream keys, and its factory. */
export interface ProviderModule {
  /** Beyond the keys every upstream has (config/config-schema.ts); `{}` when it has none. */
  readonly upstreamKeys: TProperties;
  readonly create: ProviderFactory;
  /**
   * Providers whose credentials are OAuth accounts: the account of an entry, read from `document`
   * (an account added at run time) or from where the entry says (its auth file).
   */
  readonly account?: (entry: UpstreamConfig, context: AccountContext, document?: AccountDocument) => Promise<CredentialAccount>;
  /** Checks an account document before it is stored (an account added at run time); throws naming what is wrong. */
  readonly checkAccountDocument?: (text: string) => { readonly accountId: string };
}
