import { inferSessionId, usableSessionId, type CatalogModel, type RoutingSession, type SessionIdentity } from '../../routing/index.js';
import { namedSession, sessionFor, type RoutedRequest } from '../routed-request.js';
import { isObject } from '../../core/index.js';
import type { StoredResponse } from './response-store.js';
import type { ResponsesRequest } from '../../protocols/openai-responses/responses-types.js';

/**
 * The session of a `/v1/responses` request, first found of:
 * 1. what it names, as chat: `X-Session-Id`, `metadata.session_id`, `metadata.sticky_key`;
 * 2. the session of the response `previous_response_id` names, when the gateway stored it: a
 *    continuation stays on the credential that made that response (its prompt cache; for an
 *    upstream that keeps its responses, the only one that can resolve the id);
 * 3. `prompt_cache_key`: OpenAI routes by it to the same cache, and Codex keeps it per session;
 * 4. inferred, as chat (`routing.infer_sessions`): team, model, the instructions or first
 *    system/developer message, and the first user message.
 */
export function responsesSession(
  request: RoutedRequest,
  model: CatalogModel,
  body: ResponsesRequest,
  previous: StoredResponse | null,
  inferSessions: boolean,
): RoutingSession | null {
  const named = namedSession(request, model, body.metadata);
  if (named !== null) return named;
  const identity = continuedSession(previous, body.prompt_cache_key);
  if (identity !== null) return sessionFor(request.principal, model, identity);
  if (!inferSessions) return null;
  const id = inferSessionId(request.principal.team, model.id, conversationStart(body));
  return sessionFor(request.principal, model, { id, source: 'inferred' });
}

function continuedSession(previous: StoredResponse | null, promptCacheKey: unknown): SessionIdentity | null {
  const fromPrevious = usableSessionId(previous?.session);
  if (fromPrevious !== null) return { id: fromPrevious, source: 'previous_response_id' };
  const fromCacheKey = usableSessionId(promptCacheKey);
  return fromCacheKey === null ? null : { id: fromCacheKey, source: 'prompt_cache_key' };
}

/** The request's messages as inference reads them: its instructions as the system message, then its input's messages. */
function conversationStart(body: ResponsesRequest): { messages: Array<{ role?: unknown; content?: unknown }> } {
  const messages: Array<{ role?: unknown; content?: unknown }> = [];
  if (typeof body.instructions === 'string' && body.instructions !== '') messages.push({ role: 'system', content: body.instructions });
  const { input } = body;
  if (typeof input === 'string') messages.push({ role: 'user', content: input });
  else if (Array.isArray(input))
    for (const item of input) if (isObject(item) && item['role'] !== undefined) messages.push({ role: item['role'], content: item['content'] });
  return { messages };
}
