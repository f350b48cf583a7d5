import { isObject } from '../../core/index.js';
import { inputItems, withoutId, type ResolvedConversation } from './resolve-conversation.js';
import type { ResponseInputItem } from '../../protocols/openai-responses/responses-types.js';

/**
 * The body an upstream that speaks the Responses API itself receives: the client's, with the
 * route's model name, without the gateway's session keys in `metadata` (as chat), and with what
 * only the gateway can resolve resolved:
 * - a `previous_response_id` naming a response the gateway stored (made by conversion) becomes
 *   that conversation, prepended to the input: the upstream never saw it;
 * - item references the gateway resolved become their items.
 * Any other `previous_response_id` or reference is the upstream's own, and is passed on untouched.
 */
export function passthroughBody(
  body: Readonly<Record<string, unknown>>,
  conversation: ResolvedConversation,
  upstreamModel: string,
): Record<string, unknown> & { model: string } {
  const passed: Record<string, unknown> & { model: string } = { ...body, model: upstreamModel };
  const metadata = body['metadata'];
  if (isObject(metadata) && ('session_id' in metadata || 'sticky_key' in metadata)) {
    const { session_id: _sessionId, sticky_key: _stickyKey, ...rest } = metadata;
    if (Object.keys(rest).length === 0) delete passed['metadata'];
    else passed['metadata'] = rest;
  }
  const history = conversation.previous?.items ?? null;
  if (history !== null) {
    const earlier = history.map((item) => withoutId(item) as ResponseInputItem);
    passed['input'] = [...earlier, ...inputItems(conversation.input)];
    delete passed['previous_response_id'];
  } else if (conversation.replacedReferences) {
    passed['input'] = conversation.input;
  }
  return passed;
}
