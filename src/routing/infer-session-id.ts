import { hash } from 'node:crypto';

/** What inference reads of a chat request: its messages, as the caller sent them. */
export interface ConversationStart {
  readonly messages: ReadonlyArray<{ readonly role?: unknown; readonly content?: unknown }>;
}

/**
 * The session id of a chat request that names none: a hash of the team, the model, the first
 * system (or developer) message and the first user message. Every turn of a conversation resends
 * its beginning, so every turn gets the same id; two conversations that begin differently get
 * different ones. Two that begin with the very same words share one, which costs nothing worse
 * than sharing a credential. 96 bits of SHA-256: a collision between unrelated conversations
 * would need billions of them.
 */
export function inferSessionId(team: string, model: string, request: ConversationStart): string {
  let instructions: unknown = null;
  let firstUser: unknown = null;
  for (const message of request.messages) {
    if (instructions === null && (message.role === 'system' || message.role === 'developer')) instructions = message.content ?? '';
    else if (firstUser === null && message.role === 'user') firstUser = message.content ?? '';
    if (instructions !== null && firstUser !== null) break;
  }
  // Length-prefixed parts, so that no part can pass for another; plain text as it is (the common
  // case, and cheaper than JSON), content parts as JSON.
  const material = `${team.length}:${team}${model.length}:${model}${part(instructions)}${part(firstUser)}`;
  // The one-shot hash: no Hash object per request.
  return `inf_${hash('sha256', material, 'hex').slice(0, 24)}`;
}

function part(content: unknown): string {
  if (content === null) return '-';
  const text = typeof content === 'string' ? `s${content}` : `j${JSON.stringify(content)}`;
  return `${text.length}:${text}`;
}
