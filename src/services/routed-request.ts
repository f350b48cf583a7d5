import type { Principal } from '../access/index.js';
import type { ModelType } from '../config/index.js';
import {
  resolveSession,
  type CatalogModel,
  type Routed,
  type RoutedOperation,
  type Router,
  type RoutingSession,
  type SessionIdentity,
} from '../routing/index.js';
import type { RequestRecord } from '../usage/index.js';

/** What every service gets from the edge about the request it serves. */
export interface RoutedRequest {
  principal: Principal;
  record: RequestRecord;
  cancellation: AbortSignal;
  /** The `X-Session-Id` header as received. */
  sessionHeader?: string | string[] | undefined;
}

/** The session a request names (`X-Session-Id`, then the body's metadata when it has one), for this team and model. */
export function namedSession(request: RoutedRequest, model: CatalogModel, metadata?: unknown): RoutingSession | null {
  const identity = resolveSession(request.sessionHeader, metadata);
  return identity === null ? null : sessionFor(request.principal, model, identity);
}

export function sessionFor(principal: Principal, model: CatalogModel, identity: SessionIdentity): RoutingSession {
  return { team: principal.team, model: model.id, id: identity.id, source: identity.source };
}

/** Routes the request, noting its session and what became of the binding on its record. */
export async function routeRequest<T, Type extends ModelType>(
  router: Router,
  model: CatalogModel<Type>,
  request: RoutedRequest,
  session: RoutingSession | null,
  operation: RoutedOperation<T, Type>,
): Promise<Routed<T, Type>> {
  const { record } = request;
  record.sessionId = session?.id ?? null;
  record.sessionSource = session?.source ?? null;
  // Each attempt notes its route's name for the model: the last one is the one that answered (or failed last).
  const noted: RoutedOperation<T, Type> = (route, attempt) => {
    record.upstreamModel = route.upstreamModel;
    return operation(route, attempt);
  };
  const routed = await router.route(model, { cancellation: request.cancellation, observer: record, session, caller: request.principal.team }, noted);
  record.affinity = routed.session?.affinity ?? null;
  return routed;
}
