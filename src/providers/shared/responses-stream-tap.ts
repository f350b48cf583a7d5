import type { Usage } from '../provider-adapter.js';
import { isObject } from '../../core/index.js';
import { responsesUsage } from '../../protocols/openai-responses/responses-usage.js';
import { ServerSentEventDecoder } from './server-sent-events.js';

/** The events that begin a Responses stream, each with the response and its id. */
const OPENING_EVENTS = new Set(['response.created', 'response.in_progress']);
/** The events that end it, each with the response and its usage. */
const FINAL_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed']);
/** Before the id is known, either kind names it. */
const NAMING_EVENTS = new Set([...OPENING_EVENTS, ...FINAL_EVENTS]);

/**
 * Reads a Responses stream's id and usage as its bytes pass, without touching them: each chunk
 * is handed on as it came (the same Buffer), and a copy decoded beside it is searched for the
 * event that names the response and the one that ends it. Only those two events' JSON is parsed.
 */
export class ResponsesStreamTap {
  private readonly decoder: ServerSentEventDecoder;
  private foundId: string | null = null;
  private foundUsage: Usage | null = null;
  private done = false;

  constructor(maxEventBytes: number) {
    this.decoder = new ServerSentEventDecoder(maxEventBytes);
  }

  /** The response's id, once its first event has passed; null before. */
  get responseId(): string | null {
    return this.foundId;
  }

  /** The response's usage, once its final event has passed; null before, or when it had none. */
  get usage(): Usage | null {
    return this.foundUsage;
  }

  async *tap(body: AsyncIterableIterator<Buffer>): AsyncGenerator<Buffer> {
    try {
      for await (const chunk of body) {
        if (!this.done) this.read(chunk);
        yield chunk;
      }
    } finally {
      await body.return?.();
    }
  }

  private read(chunk: Buffer): void {
    let events;
    try {
      events = this.decoder.push(chunk);
    } catch {
      // An event past the size cap: the bytes still go through; only what it said is not known.
      this.done = true;
      return;
    }
    for (const event of events) {
      const wanted = this.foundId === null ? NAMING_EVENTS : FINAL_EVENTS;
      if (event.event === null ? !mentionsAny(event.data, wanted) : !wanted.has(event.event)) continue;
      let parsed: unknown;
      try {
        parsed = JSON.parse(event.data);
      } catch {
        // Not JSON: the client gets it as sent, and judges it.
        continue;
      }
      if (!isObject(parsed) || typeof parsed['type'] !== 'string' || !isObject(parsed['response'])) continue;
      const response = parsed['response'];
      if (this.foundId === null && typeof response['id'] === 'string') this.foundId = response['id'];
      if (FINAL_EVENTS.has(parsed['type'])) {
        this.foundUsage = responsesUsage(response['usage']);
        this.done = true;
      }
    }
  }
}

/** A stream without `event:` lines names its type only inside the data. */
function mentionsAny(data: string, types: ReadonlySet<string>): boolean {
  for (const type of types) if (data.includes(`"${type}"`)) return true;
  return false;
}
