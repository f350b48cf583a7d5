import type { ChatCompletionRequest } from '../api/chat-completion-request.js';
import { peekFirst, type Peeked } from '../core/index.js';
import { GatewayError } from '../errors/index.js';
import type { ChatRequestBody, ChatStreamEvent } from '../providers/provider-adapter.js';
import { estimateChatUsage, type RequestRecord } from '../usage/index.js';
import { inferSessionId, type CatalogModel, type ModelCatalog, type Route, type Router, type RoutingSession } from '../routing/index.js';
import { resolveModel } from './resolve-model.js';
import { payloadWithPublicModel, publicModelWriter } from './public-model-name.js';
import { namedSession, routeRequest, type RoutedRequest } from './routed-request.js';

export interface ChatInput extends RoutedRequest {
  request: ChatCompletionRequest;
}

export interface CompletionOutcome {
  payload: Uint8Array;
}

export interface StreamOutcome {
  /** Chunks to send, the first already received: an upstream that fails before it is replaced by the next route. */
  events: AsyncIterable<ChatStreamEvent>;
}

export interface ChatServiceOptions {
  /** `routing.infer_sessions`: a request without a session id gets one inferred from its conversation. */
  inferSessions?: boolean;
}

/** Chat completions: routes the request (its session on its credential), with failover, and accounts for usage. */
export class ChatCompletionService {
  private readonly inferSessions: boolean;

  constructor(
    private readonly catalog: ModelCatalog,
    private readonly router: Router,
    options: ChatServiceOptions = {},
  ) {
    this.inferSessions = options.inferSessions ?? true;
  }

  async complete(input: ChatInput): Promise<CompletionOutcome> {
    const { model, session } = this.prepare(input);
    const { record } = input;
    const { value: result } = await routeRequest(this.router, model, input, session, (route, attempt) =>
      route.provider.chatCompletion(attempt, { body: upstreamBody(input.request, route), cancellation: input.cancellation }),
    );
    record.usage = result.usage;
    if (result.usage === null) record.estimateUsage = () => estimateChatUsage(input.request, result.completionText());
    return { payload: payloadWithPublicModel(result.payload, model.id) };
  }

  async stream(input: ChatInput): Promise<StreamOutcome> {
    const { model, session } = this.prepare(input);
    const { record } = input;
    const { value: opened } = await routeRequest(this.router, model, input, session, async (route, attempt) => {
      const events = await peekFirst(
        await route.provider.streamChatCompletion(attempt, { body: upstreamBody(input.request, route), cancellation: input.cancellation }),
      );
      // A stream that ends before its first chunk (`data: [DONE]` alone, or nothing) answered nothing.
      if (events.empty) throw new GatewayError('upstream_invalid_response', `Upstream ${route.credential.id} ended the stream without sending a chunk.`);
      return events;
    });
    const clientWantsUsage = input.request.stream_options?.include_usage === true;
    return { events: accountedEvents(opened, clientWantsUsage, input.request, record, model.id) };
  }

  private prepare(input: ChatInput): { model: CatalogModel<'chat'>; session: RoutingSession | null } {
    const model = resolveModel(this.catalog, input.principal, input.request.model, 'chat');
    input.record.model = model.id;
    const named = namedSession(input, model, input.request.metadata);
    if (named !== null || !this.inferSessions) return { model, session: named };
    const id = inferSessionId(input.principal.team, model.id, input.request);
    return { model, session: { team: input.principal.team, model: model.id, id, source: 'inferred' } };
  }
}

/**
 * Records usage and generated text as chunks pass, and holds back the usage-only chunk the
 * gateway asked for on its own behalf. If the stream ends without usage (old servers, or a
 * client that left early), usage is estimated from the text seen. Each chunk sent names the
 * public model id, not the upstream's name for it.
 */
async function* accountedEvents(
  events: Peeked<ChatStreamEvent>,
  clientWantsUsage: boolean,
  request: ChatCompletionRequest,
  record: RequestRecord,
  publicModel: string,
): AsyncGenerator<ChatStreamEvent> {
  let text = '';
  record.estimateUsage = () => estimateChatUsage(request, text);
  const withPublicModel = publicModelWriter(publicModel);
  try {
    for (let next = await events.next(); next.done !== true; next = await events.next()) {
      const event = next.value;
      if (event.usage !== null) record.usage = event.usage;
      text += event.text;
      if (clientWantsUsage || !event.usageOnly) {
        event.data = withPublicModel(event.data);
        yield event;
      }
    }
  } finally {
    await events.return();
  }
}

/** The body as the upstream must see it: its own model name, without the gateway's metadata keys. */
function upstreamBody(request: ChatCompletionRequest, route: Route<'chat'>): ChatRequestBody {
  const body: ChatRequestBody = { ...request, model: route.upstreamModel };
  const metadata = request.metadata;
  if (metadata !== undefined && metadata !== null && ('session_id' in metadata || 'sticky_key' in metadata)) {
    const { session_id: _sessionId, sticky_key: _stickyKey, ...rest } = metadata;
    if (Object.keys(rest).length === 0) delete body['metadata'];
    else body['metadata'] = rest;
  }
  return body;
}
