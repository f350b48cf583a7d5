import { createHash } from 'node:crypto';
import { isObject } from '../../core/index.js';

/** A function as the Responses API names it: a plain one has no namespace. */
export interface QualifiedToolName {
  name: string;
  namespace?: string;
}

/**
 * What chat upstreams accept as a function name: Anthropic and OpenAI allow `^[a-zA-Z0-9_-]{1,64}$`,
 * and Gemini wants a letter or an underscore first.
 */
const CHAT_NAME = /^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/;
const MAX_CHAT_NAME = 64;
const SEPARATOR = '__';

/**
 * The names a request's namespaced functions get in chat, where a function name is all there
 * is: `{namespace}__{name}` (`multi_agent_v1__spawn_agent`) when that is a name every chat
 * upstream accepts and no plain function of the request has it; otherwise the same, with what no
 * upstream accepts replaced and cut to fit, ended by a hash of the qualified name. The table is
 * made from the request's own tools, so the upstream's tool calls go back as the namespace's
 * functions (`name` and `namespace`, as OpenAI returns them), and earlier calls in the input,
 * which carry their `namespace`, are sent with the names the tools were given.
 */
export class ChatToolNames {
  private readonly toChat = new Map<string, string>();
  private readonly fromChat = new Map<string, QualifiedToolName>();

  private constructor(private readonly plain: ReadonlySet<string>) {}

  /** The table for a request's `tools`; what is malformed is left for the conversion to refuse. */
  static of(tools: readonly unknown[] | null | undefined): ChatToolNames {
    const list = tools ?? [];
    const plain = new Set<string>();
    for (const tool of list) {
      if (isObject(tool) && tool['type'] === 'function' && typeof tool['name'] === 'string') plain.add(tool['name']);
    }
    const names = new ChatToolNames(plain);
    for (const tool of list) {
      if (!isObject(tool) || tool['type'] !== 'namespace' || typeof tool['name'] !== 'string' || !Array.isArray(tool['tools'])) continue;
      const namespace = tool['name'];
      for (const member of tool['tools'] as unknown[]) {
        if (isObject(member) && member['type'] === 'function' && typeof member['name'] === 'string') names.chatName(member['name'], namespace);
      }
    }
    return names;
  }

  /** The chat name of a function; a plain function keeps its own. */
  chatName(name: string, namespace?: string | null): string {
    if (namespace === undefined || namespace === null || namespace === '') return name;
    const key = `${namespace}\u0000${name}`;
    const known = this.toChat.get(key);
    if (known !== undefined) return known;
    const flat = `${namespace}${SEPARATOR}${name}`;
    let chat = CHAT_NAME.test(flat) && !this.taken(flat) ? flat : hashedName(flat, key);
    // A hashed name that meets another (never seen, but cheap to rule out) gets a longer hash.
    for (let salt = 1; this.taken(chat); salt++) chat = hashedName(flat, `${key}\u0000${salt}`);
    this.toChat.set(key, chat);
    this.fromChat.set(chat, { name, namespace });
    return chat;
  }

  /** The Responses name of a function the upstream called: a namespace's function, or the name as it came. */
  qualified(chatName: string): QualifiedToolName {
    return this.fromChat.get(chatName) ?? { name: chatName };
  }

  private taken(chat: string): boolean {
    return this.plain.has(chat) || this.fromChat.has(chat);
  }
}

function hashedName(flat: string, key: string): string {
  const hash = createHash('sha256').update(key).digest('hex').slice(0, 10);
  let readable = flat.replace(/[^a-zA-Z0-9_-]/g, '_');
  if (!/^[a-zA-Z_]/.test(readable)) readable = `_${readable}`;
  return `${readable.slice(0, MAX_CHAT_NAME - hash.length - 1)}_${hash}`;
}
