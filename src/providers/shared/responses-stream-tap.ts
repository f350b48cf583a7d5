import type { Usage } from '../provider-adapter.js';
import { isObject } from '../../core/index.js';
import { responsesUsage } from '../../protocols/openai-responses/responses-usage.js';
import { EventTap } from './event-tap.js';
import type { ServerSentEvent } from './server-sent-events.js';

/** The events that begin a Responses stream, each with the response and its id. */
const OPENING_EVENTS = new Set(['response.created', 'response.in_progress']);
/** The events that end it, each with the response and its usage. */
const FINAL_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed']);
/** Before the id is known, either kind names it. */
const NAMING_EVENTS = new Set([...OPENING_EVENTS, ...FINAL_EVENTS]);

/**
 * Reads a Responses stream's id and usage as its bytes pass (EventTap: the bytes untouched): the
 * event that names the response and the one that ends it are the only events whose JSON is parsed.
 */
export class ResponsesStreamTap {
  private readonly events: EventTap;
  private foundId: string | null = null;
  private foundUsage: Usage | null = null;

  constructor(maxEventBytes: number) {
    this.events = new EventTap(maxEventBytes, (event) => this.read(event));
  }

  /** The response's id, once its first event has passed; null before. */
  get responseId(): string | null {
    return this.foundId;
  }

  /** The response's usage, once its final event has passed; null before, or when it had none. */
  get usage(): Usage | null {
    return this.foundUsage;
  }

  tap(body: AsyncIterableIterator<Buffer>): AsyncGenerator<Buffer> {
    return this.events.tap(body);
  }

  /** True once the final event went by. */
  private read(event: ServerSentEvent): boolean {
    const wanted = this.foundId === null ? NAMING_EVENTS : FINAL_EVENTS;
    if (event.event === null ? !mentionsAny(event.data, wanted) : !wanted.has(event.event)) return false;
    let parsed: unknown;
    try {
      parsed = JSON.parse(event.data);
    } catch {
      // Not JSON: the client gets it as sent, and judges it.
      return false;
    }
    if (!isObject(parsed) || typeof parsed['type'] !== 'string' || !isObject(parsed['response'])) return false;
    const response = parsed['response'];
    if (this.foundId === null && typeof response['id'] === 'string') this.foundId = response['id'];
    if (!FINAL_EVENTS.has(parsed['type'])) return false;
    this.foundUsage = responsesUsage(response['usage']);
    return true;
  }
}

/** A stream without `event:` lines names its type only inside the data. */
function mentionsAny(data: string, types: ReadonlySet<string>): boolean {
  for (const type of types) if (data.includes(`"${type}"`)) return true;
  return false;
}
