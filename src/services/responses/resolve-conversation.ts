import { isObject } from '../../core/index.js';
import type { ResponseStore, StoredResponse } from './response-store.js';
import type { ResponseInputItem, ResponsesRequest } from '../../protocols/openai-responses/responses-types.js';

/** What a request's references to earlier responses resolve to, from the gateway's own store. */
export interface ResolvedConversation {
  /**
   * The stored response `previous_response_id` names; null when the request names none, or the
   * gateway keeps none by that id for this team (then only an upstream that keeps its own
   * responses can resolve it).
   */
  previous: StoredResponse | null;
  /**
   * The input with each item reference the gateway could resolve replaced by its item, one for
   * one, so that `input[i]` still names the client's item; references it could not resolve stay.
   * A replacement comes without its id: an upstream that keeps its own items would look it up.
   */
  input: ResponsesRequest['input'];
  /** Whether any reference was replaced. */
  replacedReferences: boolean;
}

/**
 * Looks up `previous_response_id` and every `item_reference` of the input in the team's stored
 * responses, all at once. Nothing is refused here: what stays unresolved is refused by the
 * conversion (naming it), and passed on untouched to an upstream that resolves its own.
 */
export async function resolveConversation(
  store: ResponseStore,
  team: string,
  request: Pick<ResponsesRequest, 'input' | 'previous_response_id'>,
): Promise<ResolvedConversation> {
  const { input } = request;
  const previousId = request.previous_response_id;
  const references = Array.isArray(input) ? input.map((item) => referencedId(item)) : [];
  const [previous, items] = await Promise.all([
    typeof previousId === 'string' && previousId !== '' ? store.find(team, previousId) : Promise.resolve(null),
    Promise.all(references.map((id) => (id === null ? Promise.resolve(null) : store.findItem(team, id)))),
  ]);
  if (!Array.isArray(input) || items.every((item) => item === null)) return { previous, input, replacedReferences: false };
  return { previous, input: input.map((item, index) => withoutId(items[index] ?? null) ?? item), replacedReferences: true };
}

/** An item from the store as an upstream that keeps its own items must see it: without the gateway's id. */
export function withoutId(item: ResponseInputItem | null): ResponseInputItem | null {
  if (item === null || !('id' in item)) return item;
  const { id: _id, ...rest } = item;
  return rest as ResponseInputItem;
}

/**
 * The id an input item refers to, when it is an item reference: `type: item_reference`, or, as
 * the API allows, no type and no role (the conversion reads items by the same rule).
 */
export function referencedId(item: unknown): string | null {
  if (!isObject(item)) return null;
  const type = item['type'];
  const isReference = type === 'item_reference' || ((type === undefined || type === null) && item['role'] === undefined);
  return isReference && typeof item['id'] === 'string' && item['id'] !== '' ? item['id'] : null;
}

/** Input items as the conversation keeps them: a string input is the user's message. */
export function inputItems(input: ResponsesRequest['input']): ResponseInputItem[] {
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }];
  return Array.isArray(input) ? [...input] : [];
}
