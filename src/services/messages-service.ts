import type { IncomingHttpHeaders } from 'node:http';
import { isObject, peekFirst, type Peeked } from '../core/index.js';
import { GatewayError } from '../errors/index.js';
import { chatCompletionToMessage, randomMessageId } from '../protocols/anthropic-messages/convert-chat-to-message.js';
import { messagesToChat, type MessagesChatConversion } from '../protocols/anthropic-messages/convert-messages-to-chat.js';
import { messagesErrorType, messagesStatus } from '../protocols/anthropic-messages/messages-error.js';
import { MessagesEventStream } from '../protocols/anthropic-messages/messages-event-stream.js';
import type { MessageObject, MessagesRequestBody, MessagesServerSentEvent } from '../protocols/anthropic-messages/messages-types.js';
import type { Attempt, ChatCompletionResult, ChatStreamEvent, MessagesEventBytes, MessagesProvider, MessagesResult } from '../providers/provider-adapter.js';
import {
  inferSessionId,
  resolveMessagesSession,
  type CatalogModel,
  type ModelCatalog,
  type Route,
  type Router,
  type RoutingSession,
} from '../routing/index.js';
import { estimateChatUsage, type RequestRecord } from '../usage/index.js';
import { payloadWithPublicModel } from './public-model-name.js';
import { withPublicModelEvents } from './public-model-events.js';
import { recordedChunks } from './recorded-chunks.js';
import { resolveModel } from './resolve-model.js';
import { routeRequest, sessionFor, type RoutedRequest } from './routed-request.js';

export interface MessagesInput extends RoutedRequest {
  request: MessagesRequestBody;
  /** The body as received (decoded), passed on with only its `model` replaced to an upstream that speaks Messages. */
  raw: Uint8Array;
  headers: IncomingHttpHeaders;
  /**
   * What the caller is told of a failure after the stream began (the edge's own mapping, which
   * also notes and logs it): upstream failures are said in words that name no credential.
   */
  failedMidStream: (error: unknown) => GatewayError;
}

/** The answer: a message as JSON, converted events, or an upstream's own event stream as bytes. */
export type MessagesOutcome =
  | { kind: 'json'; payload: Uint8Array }
  | { kind: 'events'; events: AsyncIterable<MessagesServerSentEvent> }
  | { kind: 'bytes'; body: AsyncIterable<Buffer> };

export interface MessagesServiceOptions {
  /** `routing.infer_sessions`, as chat. */
  inferSessions?: boolean;
  /**
   * Told the first time (in this process) a request field or tool a chat upstream has no
   * equivalent for is left out of a converted request: once per field, so that a client sending
   * it on every turn (Claude Code sends `thinking` and `context_management`) writes one line.
   */
  onDropped?: (dropped: { field: string; model: string }) => void;
}

/** The caller's headers an Anthropic upstream gets: the API version and the beta features asked for. */
const PASSED_HEADERS = ['anthropic-version', 'anthropic-beta'] as const;

/** What one attempt got, before it is turned into the answer. */
type Answer =
  | { kind: 'passthrough'; result: MessagesResult; body: Peeked<Buffer> | null }
  | { kind: 'converted-json'; result: ChatCompletionResult; message: MessageObject; chat: MessagesChatConversion['body'] }
  | { kind: 'converted-stream'; events: Peeked<ChatStreamEvent>; chat: MessagesChatConversion['body'] };

/**
 * `POST /v1/messages` (Anthropic's Messages API, what Claude Code and the Anthropic SDKs speak)
 * for every chat model. Each attempt's route decides how: a credential whose upstream speaks
 * Messages (anthropic) gets the caller's bytes with only `model` replaced, and its answer back as
 * it came; any other is sent it as chat completions, and its answer is converted back
 * (src/protocols/anthropic-messages/). Routing, sessions, failover and usage are chat's. See
 * docs/messages-api.md.
 */
export class MessagesService {
  private readonly inferSessions: boolean;
  private readonly reportDropped: (dropped: readonly string[], model: string) => void;

  constructor(
    private readonly catalog: ModelCatalog,
    private readonly router: Router,
    options: MessagesServiceOptions = {},
  ) {
    this.inferSessions = options.inferSessions ?? true;
    const told = new Set<string>();
    this.reportDropped = (dropped, model) => {
      for (const field of dropped) {
        if (told.has(field)) continue;
        told.add(field);
        options.onDropped?.({ field, model });
      }
    };
  }

  async create(input: MessagesInput): Promise<MessagesOutcome> {
    const { request, record } = input;
    const model = resolveModel(this.catalog, input.principal, request.model, 'chat');
    record.model = model.id;
    const stream = request['stream'] === true;
    const turn = new Turn(input, model, stream, this.reportDropped);
    const { value: answer } = await routeRequest(this.router, model, input, this.session(input, model), (route, attempt) =>
      route.messages ? turn.passThrough(route.messages, route, attempt) : turn.convert(route, attempt),
    );
    switch (answer.kind) {
      case 'passthrough': {
        const { result } = answer;
        if (result.kind === 'json') {
          record.usage = result.usage;
          return { kind: 'json', payload: payloadWithPublicModel(result.payload, model.id) };
        }
        return { kind: 'bytes', body: withPublicModelEvents(passedThrough(answer.body as Peeked<Buffer>, result, record), model.id, 'message') };
      }
      case 'converted-json': {
        const { result, chat } = answer;
        record.usage = result.usage;
        if (result.usage === null) record.estimateUsage = () => estimateChatUsage(chat, result.completionText());
        return { kind: 'json', payload: Buffer.from(JSON.stringify(answer.message)) };
      }
      case 'converted-stream': {
        // Taken alone, so that the open stream does not hold the request (its body) through `input`.
        const { failedMidStream } = input;
        const converter = new MessagesEventStream({ id: randomMessageId(), model: model.id }, (error) => {
          const said = failedMidStream(error);
          return { type: messagesErrorType(messagesStatus(said.status, said.upstream?.class === 'overloaded')), message: said.message };
        });
        return { kind: 'events', events: converter.events(recordedChunks(answer.events, answer.chat, record)) };
      }
    }
  }

  /**
   * `POST /v1/messages/count_tokens`: asked of an upstream that speaks Messages when the model has
   * one (its own count, free of charge there); else counted here as the conversion would send it,
   * with the gateway's tokenizer (o200k_base: the chat upstream's own count may differ a little).
   */
  async countTokens(input: MessagesInput): Promise<Uint8Array> {
    const { request, record } = input;
    const model = resolveModel(this.catalog, input.principal, request.model, 'chat');
    record.model = model.id;
    const routes = model.routes.filter((route) => route.messages);
    if (routes.length === 0) {
      const { promptTokens } = await estimateChatUsage(messagesToChat(request).body, '');
      return Buffer.from(JSON.stringify({ input_tokens: promptTokens }));
    }
    const counted = { ...model, routes, totalWeight: routes.reduce((sum, route) => sum + route.weight, 0) };
    const headers = passedHeaders(input.headers);
    const { value } = await routeRequest(this.router, counted, input, null, (route, attempt) =>
      (route.messages as MessagesProvider).countTokens(attempt, {
        body: payloadWithPublicModel(input.raw, route.upstreamModel),
        headers,
        cancellation: input.cancellation,
      }),
    );
    return value;
  }

  /** The session the request names (`X-Session-Id`, Claude Code's), else one inferred from how its conversation begins. */
  private session(input: MessagesInput, model: CatalogModel<'chat'>): RoutingSession | null {
    const named = resolveMessagesSession(input.headers, input.request['metadata']);
    if (named !== null) return sessionFor(input.principal, model, named);
    if (!this.inferSessions) return null;
    const { request } = input;
    const start = request['system'] === undefined ? request.messages : [{ role: 'system', content: request['system'] }, ...request.messages];
    const team = input.principal.team;
    return {
      team,
      model: model.id,
      id: inferSessionId(team, model.id, { messages: start as Array<{ role?: unknown; content?: unknown }> }),
      source: 'inferred',
    };
  }
}

/** One request, as each route is called. */
class Turn {
  private converted: MessagesChatConversion | undefined;
  private droppedReported = false;
  private readonly headers: Record<string, string>;

  constructor(
    private readonly input: MessagesInput,
    private readonly model: CatalogModel<'chat'>,
    private readonly stream: boolean,
    private readonly reportDropped: (dropped: readonly string[], model: string) => void,
  ) {
    this.headers = passedHeaders(input.headers);
  }

  async passThrough(provider: MessagesProvider, route: Route<'chat'>, attempt: Attempt): Promise<Answer> {
    const body = payloadWithPublicModel(this.input.raw, route.upstreamModel);
    const result = await provider.createMessage(attempt, { body, stream: this.stream, headers: this.headers, cancellation: this.input.cancellation });
    if (result.kind === 'json') {
      if (this.stream) throw new Error(`${attempt.credential.id}: createMessage answered a stream request with JSON`);
      return { kind: 'passthrough', result, body: null };
    }
    if (!this.stream) throw new Error(`${attempt.credential.id}: createMessage answered a JSON request with a stream`);
    const bytes = await peekFirst(result.body);
    // A stream that ends before its first byte answered nothing: the next route may.
    if (bytes.empty) throw new GatewayError('upstream_invalid_response', `Upstream ${attempt.credential.id} ended the stream without sending an event.`);
    return { kind: 'passthrough', result, body: bytes };
  }

  async convert(route: Route<'chat'>, attempt: Attempt): Promise<Answer> {
    const { body, dropped } = this.chatBody();
    if (!this.droppedReported) {
      this.droppedReported = true;
      this.reportDropped(dropped, this.model.id);
    }
    const chat = { ...body, model: route.upstreamModel };
    const { cancellation } = this.input;
    if (!this.stream) {
      const result = await route.provider.chatCompletion(attempt, { body: chat, cancellation });
      // Read here, so that an answer that is not a completion fails this attempt, not the request.
      const message = chatCompletionToMessage(parseCompletion(result.payload, attempt.credential.id), this.model.id);
      return { kind: 'converted-json', result, message, chat };
    }
    const events = await peekFirst(await route.provider.streamChatCompletion(attempt, { body: chat, cancellation }));
    if (events.empty) throw new GatewayError('upstream_invalid_response', `Upstream ${attempt.credential.id} ended the stream without sending a chunk.`);
    return { kind: 'converted-stream', events, chat };
  }

  /** The request as chat completions, made once; refuses, naming it, what a chat upstream cannot do. */
  chatBody(): MessagesChatConversion {
    this.converted ??= messagesToChat(this.input.request);
    return this.converted;
  }
}

function passedHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const passed: Record<string, string> = {};
  for (const name of PASSED_HEADERS) {
    const value = headers[name];
    if (typeof value === 'string') passed[name] = value;
  }
  return passed;
}

/** An upstream's Messages stream, passed on byte for byte; its usage goes on the record when it ends, however it ends. */
async function* passedThrough(body: Peeked<Buffer>, result: MessagesEventBytes, record: RequestRecord): AsyncGenerator<Buffer> {
  try {
    for (let next = await body.next(); next.done !== true; next = await body.next()) yield next.value;
  } finally {
    record.usage = result.usage();
    await body.return();
  }
}

/** A chat completion's bytes as an object; a body that is not JSON fails the attempt (another route may answer). */
function parseCompletion(payload: Uint8Array, credentialId: string): unknown {
  try {
    const parsed = JSON.parse(Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('utf8')) as unknown;
    if (isObject(parsed)) return parsed;
  } catch {
    // Said below.
  }
  throw new GatewayError('upstream_invalid_response', `Upstream ${credentialId} answered with a body that is not a JSON object.`);
}
