import type { ResponsesRequestBody } from '../api/responses-request.js';
import { echo, GatewayError, isGatewayError } from '../errors/index.js';
import { peekFirst, type Peeked, type Usage } from '../core/index.js';
import type {
  Attempt,
  ChatCompletionResult,
  ChatRequestBody,
  ChatStreamEvent,
  ResponsesEventBytes,
  ResponsesPayload,
  ResponsesProvider,
  ResponsesResult,
  StatelessResponsesProvider,
} from '../providers/provider-adapter.js';
import type { CatalogModel, ModelCatalog, Route, Router, RoutingSession } from '../routing/index.js';
import { estimateChatUsage } from '../usage/index.js';
import { resolveModel } from './resolve-model.js';
import { routeRequest, type RoutedRequest } from './routed-request.js';
import { ChatToolNames } from '../protocols/openai-responses/chat-tool-names.js';
import { chatCompletionToResponse, responseOutputItems, turnItems } from '../protocols/openai-responses/convert-chat-to-response.js';
import { responsesToChat } from '../protocols/openai-responses/convert-responses-to-chat.js';
import { convertedEvents } from './responses/converted-events.js';
import type { DroppedTool } from '../protocols/openai-responses/convert-responses-tools.js';
import { passedThroughBytes } from './responses/passed-through-bytes.js';
import { passthroughBody } from './responses/passthrough-body.js';
import { passesThrough, passthroughModelOf } from './responses/passthrough-model.js';
import { withPublicModelEvents } from './public-model-events.js';
import { payloadWithPublicModel } from './public-model-name.js';
import { refuseField } from '../protocols/openai-responses/refuse-field.js';
import { resolveConversation, type ResolvedConversation } from './responses/resolve-conversation.js';
import { nowSeconds, randomItemId, type ResponseContext, type ResponseObject } from '../protocols/openai-responses/response-object.js';
import type { ResponseStore } from './responses/response-store.js';
import { ResponsesEventStream, type ResponsesServerSentEvent } from '../protocols/openai-responses/responses-event-stream.js';
import { fromFirstOutput, generatedText, readResponseEvents } from '../protocols/openai-responses/read-response-events.js';
import type { ResponseStreamEvent } from '../protocols/openai-responses/responses-types.js';
import { toStatelessRequest } from '../protocols/openai-responses/stateless-request.js';
import { inputItems } from './responses/resolve-conversation.js';
import { statelessEvents } from './responses/stateless-events.js';
import { responsesSession } from './responses/responses-session.js';

export interface ResponsesInput extends RoutedRequest {
  request: ResponsesRequestBody;
  /**
   * What the caller is told of a failure after the stream began (the edge's own mapping, which
   * also notes and logs it): upstream failures are said in words that name no credential.
   */
  failedMidStream: (error: unknown) => GatewayError;
}

/** The answer: a Response as JSON, converted events, or an upstream's own event stream as bytes. */
export type ResponsesOutcome =
  | { kind: 'json'; payload: Uint8Array }
  | { kind: 'events'; events: AsyncIterable<ResponsesServerSentEvent> }
  | { kind: 'bytes'; body: AsyncIterable<Buffer> };

export interface ResponsesServiceOptions {
  /** `routing.infer_sessions`, as chat. */
  inferSessions?: boolean;
  /**
   * Told the first time (in this process) a tool of a type the chat upstream cannot run (web_search,
   * custom…) is left out of a converted request, with the model and where it was: once per type, so
   * that a client sending it on every turn (Codex sends web_search) writes one line, not one a turn.
   */
  onDroppedTool?: (dropped: DroppedTool & { model: string }) => void;
}

/** What one attempt got, before it is turned into the answer. */
type Answer =
  | { kind: 'passthrough-json'; result: ResponsesPayload }
  | { kind: 'passthrough-stream'; result: ResponsesEventBytes; body: Peeked<Buffer> }
  | { kind: 'converted-json'; result: ChatCompletionResult; response: ResponseObject; chat: ChatRequestBody }
  | { kind: 'converted-stream'; events: Peeked<ChatStreamEvent>; chat: ChatRequestBody }
  | { kind: 'stateless-json'; response: ResponseObject; usage: Usage | null; chat: ChatRequestBody }
  | { kind: 'stateless-stream'; events: Peeked<ResponseStreamEvent>; chat: ChatRequestBody };

/**
 * `POST /v1/responses` for every chat model. Each attempt's route decides how: a credential whose
 * upstream speaks the Responses API (openai) gets the request passed through; one whose upstream
 * speaks it but keeps nothing (codex) is sent it as Responses, with the conversation the gateway
 * keeps, and its events are read into the gateway's own; any other is sent it as chat
 * completions, and its answer is converted back (src/protocols/openai-responses/). Routing,
 * sessions, failover and usage are chat's. The responses the gateway makes are stored for
 * `previous_response_id` and `item_reference` (ResponseStore). See docs/responses-api.md.
 */
export class ResponsesService {
  private readonly inferSessions: boolean;
  private readonly reportDropped: (dropped: readonly DroppedTool[], model: string) => void;

  constructor(
    private readonly catalog: ModelCatalog,
    private readonly router: Router,
    private readonly store: ResponseStore,
    options: ResponsesServiceOptions = {},
  ) {
    this.inferSessions = options.inferSessions ?? true;
    const told = new Set<string>();
    const onDroppedTool = options.onDroppedTool;
    this.reportDropped = (dropped, model) => {
      for (const tool of dropped) {
        if (told.has(tool.type)) continue;
        told.add(tool.type);
        onDroppedTool?.({ ...tool, model });
      }
    };
  }

  async create(input: ResponsesInput): Promise<ResponsesOutcome> {
    // Checked by the API schema for the fields it types; the converters check the rest as they read it.
    const { request } = input;
    const model = resolveModel(this.catalog, input.principal, request.model, 'chat');
    input.record.model = model.id;
    if (request.background === true) {
      // A background response is fetched later with GET /v1/responses/{id}, which the gateway does not serve.
      throw refuseField('background', 'Background responses are not supported by this gateway; send the request without background, streaming if it is long.');
    }
    const team = input.principal.team;
    const conversation = await resolveConversation(this.store, team, request);
    const session = responsesSession(input, model, request, conversation.previous, this.inferSessions);
    const turn = new Turn(request, conversation, model, this.store, team, session, this.reportDropped);
    const routed = routesFor(model, turn);
    const stream = request.stream === true;
    const { value: answer } = await routeRequest(this.router, routed, input, session, (route, attempt) => {
      if (passesThrough(route)) return turn.passThrough(route.responses as ResponsesProvider, route, attempt, stream, input.cancellation);
      const stateless = route.statelessResponses;
      if (stateless !== undefined && stateless !== null) return turn.sendStateless(stateless, route, attempt, stream, input.cancellation);
      return turn.convert(route, attempt, stream, input.cancellation);
    });
    const { record } = input;
    switch (answer.kind) {
      case 'passthrough-json':
        record.usage = answer.result.usage;
        if (answer.result.responseId !== null) await turn.rememberUpstreamResponse(answer.result.responseId);
        return { kind: 'json', payload: payloadWithPublicModel(answer.result.payload, model.id) };
      case 'passthrough-stream':
        return {
          kind: 'bytes',
          body: withPublicModelEvents(
            passedThroughBytes(answer.body, answer.result, record, (id) => void turn.rememberUpstreamResponse(id)),
            model.id,
          ),
        };
      case 'converted-json': {
        const { result, response, chat } = answer;
        record.usage = result.usage;
        if (result.usage === null) record.estimateUsage = () => estimateChatUsage(chat, result.completionText());
        await turn.remember(response);
        return { kind: 'json', payload: Buffer.from(JSON.stringify(response)) };
      }
      case 'converted-stream': {
        const converter = new ResponsesEventStream(turn.context, input.failedMidStream);
        const events = convertedEvents(answer.events, converter, {
          chat: answer.chat,
          record,
          onFinal: (response) => turn.remember(response),
        });
        return { kind: 'events', events };
      }
      case 'stateless-json': {
        const { response, usage, chat } = answer;
        record.usage = usage;
        if (usage === null) record.estimateUsage = () => estimateChatUsage(chat, generatedText(response.output));
        await turn.remember(response);
        return { kind: 'json', payload: Buffer.from(JSON.stringify(response)) };
      }
      case 'stateless-stream': {
        const converter = new ResponsesEventStream(turn.context, input.failedMidStream, readResponseEvents);
        const events = statelessEvents(answer.events, converter, { chat: answer.chat, record, onFinal: (response) => turn.remember(response) });
        return { kind: 'events', events };
      }
    }
  }
}

/**
 * The routes that can serve the request. What conversion cannot do (a `previous_response_id` only
 * the upstream knows…) is refused, naming it, before any upstream is called, and what it would
 * leave out (a built-in tool) is left out, unless some routes pass the Responses API through:
 * then the request goes to those only, which can do it all.
 */
function routesFor(model: CatalogModel<'chat'>, turn: Turn): CatalogModel<'chat'> {
  if (model.routes.every(passesThrough)) return model;
  let dropsTools: boolean;
  try {
    dropsTools = turn.chatBody().dropped.length > 0;
  } catch (error) {
    const passthrough = passthroughModelOf(model);
    if (passthrough === null) throw error;
    return passthrough;
  }
  return dropsTools ? (passthroughModelOf(model) ?? model) : model;
}

/** One request's turn of a conversation: how each route is called, and what is stored after. */
class Turn {
  /** The converted response's id and echo; also the key it is stored under. */
  readonly context: ResponseContext;
  /** The chat names of the request's namespaced functions, both ways. */
  private readonly names: ChatToolNames;
  private converted: { body: ChatRequestBody; dropped: DroppedTool[] } | undefined;
  private droppedReported = false;

  constructor(
    private readonly request: ResponsesRequestBody,
    private readonly conversation: ResolvedConversation,
    model: CatalogModel<'chat'>,
    private readonly store: ResponseStore,
    private readonly team: string,
    private readonly session: RoutingSession | null,
    private readonly reportDropped: (dropped: readonly DroppedTool[], model: string) => void,
  ) {
    this.names = ChatToolNames.of(request.tools);
    this.context = { id: randomItemId('resp'), createdAt: nowSeconds(), model: model.id, request, toolName: (name) => this.names.qualified(name) };
  }

  /**
   * The request as chat completions (the client's model name still in it), made once. Refuses,
   * naming it, what conversion cannot do, and a reference the gateway could not resolve: a chat
   * upstream keeps no conversation of its own.
   */
  chatBody(): { body: ChatRequestBody; dropped: DroppedTool[] } {
    if (this.converted !== undefined) return this.converted;
    const { previous_response_id: previousId } = this.request;
    const history = this.conversation.previous?.items ?? null;
    if (typeof previousId === 'string' && previousId !== '' && history === null) {
      if (this.conversation.previous === null) {
        throw new GatewayError(
          'previous_response_not_found',
          `Previous response with id ${echo(previousId)} not found: it was never stored (store: false), has expired, was evicted to keep the team's stored responses within responses.max_bytes_per_team (the oldest go first), or belongs to another team; send the conversation as input instead.`,
          { param: 'previous_response_id' },
        );
      }
      throw refuseField(
        'previous_response_id',
        `Previous response with id ${echo(previousId)} is kept by the upstream that made it, not by this gateway, and cannot be continued by an upstream that speaks chat completions; send the conversation as input instead.`,
      );
    }
    this.converted = responsesToChat({ ...this.request, input: this.conversation.input }, history ?? [], this.names);
    return this.converted;
  }

  async passThrough(provider: ResponsesProvider, route: Route<'chat'>, attempt: Attempt, stream: boolean, cancellation: AbortSignal): Promise<Answer> {
    const body = passthroughBody(this.request, this.conversation, route.upstreamModel);
    let result: ResponsesResult;
    try {
      result = await provider.createResponse(attempt, { body, stream, cancellation });
    } catch (error) {
      // The server has no Responses API (`responses: auto` found out on this call): the same
      // request is converted to chat on the same credential instead of failing.
      if (provider.servesResponses?.() === false && isGatewayError(error) && error.upstream?.class === 'caller')
        return this.convert(route, attempt, stream, cancellation);
      throw error;
    }
    if (result.kind === 'json') {
      if (stream) throw new Error(`${attempt.credential.id}: createResponse answered a stream request with JSON`);
      return { kind: 'passthrough-json', result };
    }
    if (!stream) throw new Error(`${attempt.credential.id}: createResponse answered a JSON request with a stream`);
    const bytes = await peekFirst(result.body);
    // A stream that ends before its first byte answered nothing: the next route may.
    if (bytes.empty) throw new GatewayError('upstream_invalid_response', `Upstream ${attempt.credential.id} ended the stream without sending an event.`);
    return { kind: 'passthrough-stream', result, body: bytes };
  }

  async convert(route: Route<'chat'>, attempt: Attempt, stream: boolean, cancellation: AbortSignal): Promise<Answer> {
    const { body, dropped } = this.chatBody();
    this.reportDroppedOnce(dropped);
    const chat: ChatRequestBody = { ...body, model: route.upstreamModel };
    if (!stream) {
      const result = await route.provider.chatCompletion(attempt, { body: chat, cancellation });
      return { kind: 'converted-json', result, response: chatCompletionToResponse(parseCompletion(result.payload, attempt.credential.id), this.context), chat };
    }
    const events = await peekFirst(await route.provider.streamChatCompletion(attempt, { body: chat, cancellation }));
    if (events.empty) throw new GatewayError('upstream_invalid_response', `Upstream ${attempt.credential.id} ended the stream without sending a chunk.`);
    return { kind: 'converted-stream', events, chat };
  }

  /**
   * The request sent as Responses to an upstream that keeps nothing (codex), with the whole
   * conversation the gateway keeps. It is refused for what conversion refuses, and offered the
   * tools conversion offers (chatBody: a pool may mix these credentials with chat ones, and each
   * answers alike), but as they came: namespaces, reasoning and text controls stay the Responses
   * API's. Its events are read into the gateway's own Response, as a chat stream's are.
   */
  async sendStateless(
    provider: StatelessResponsesProvider,
    route: Route<'chat'>,
    attempt: Attempt,
    stream: boolean,
    cancellation: AbortSignal,
  ): Promise<Answer> {
    const { body: chat, dropped } = this.chatBody();
    this.reportDroppedOnce(dropped);
    const history = this.conversation.previous?.items ?? [];
    const body = toStatelessRequest(this.request, {
      upstreamModel: route.upstreamModel,
      input: [...history, ...inputItems(this.conversation.input)],
      leftOut: new Set(dropped.map((tool) => tool.param)),
    });
    const events = await peekFirst(fromFirstOutput(await provider.streamResponse(attempt, { body, cancellation })));
    if (events.empty) throw new GatewayError('upstream_invalid_response', `Upstream ${attempt.credential.id} ended the stream without sending an event.`);
    if (stream) return { kind: 'stateless-stream', events, chat };
    // The upstream only streams: a JSON answer is its stream, read to the end.
    const converter = new ResponsesEventStream(this.context, undefined, readResponseEvents);
    for await (const _event of converter.events(events)) {
      // Only the final response is kept.
    }
    const { response, usage, error } = converter.result();
    if (error !== undefined) throw error;
    return { kind: 'stateless-json', response, usage, chat };
  }

  private reportDroppedOnce(dropped: readonly DroppedTool[]): void {
    if (this.droppedReported) return;
    this.droppedReported = true;
    this.reportDropped(dropped, this.context.model);
  }

  /**
   * Stores a converted response that ended (completed or incomplete), unless the client said
   * `store: false`: this turn's items, linked to the turns before it, which are stored already.
   */
  async remember(response: ResponseObject): Promise<void> {
    if (this.request.store === false || (response.status !== 'completed' && response.status !== 'incomplete')) return;
    const items = turnItems({ input: this.conversation.input }, response);
    await this.store.save(
      this.team,
      response.id,
      { session: this.session?.id ?? null, earlier: this.conversation.previous?.links ?? [], items },
      responseOutputItems(response),
    );
  }

  /**
   * Remembers where a response an upstream keeps itself was made, so that its continuation goes
   * to the same credential (the upstream resolves the id, but only the credential's own project can).
   */
  async rememberUpstreamResponse(id: string): Promise<void> {
    if (this.request.store === false || this.session === null) return;
    await this.store.save(this.team, id, { session: this.session.id, earlier: [], items: null }, []);
  }
}

/** A chat completion's bytes as an object; a body that is not JSON fails the attempt (another route may answer). */
function parseCompletion(payload: Uint8Array, credentialId: string): unknown {
  try {
    return JSON.parse(Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('utf8')) as unknown;
  } catch {
    throw new GatewayError('upstream_invalid_response', `Upstream ${credentialId} answered with a body that is not JSON.`);
  }
}
