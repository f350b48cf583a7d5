import type { Usage } from '../provider-adapter.js';
import { ServerSentEventDecoder } from '../shared/server-sent-events.js';
import { toUsage } from './map-responses-usage.js';

/** The events that end a Responses stream, each with the response and its usage. */
const FINAL_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/**
 * Reads a native stream's usage as its bytes pass, without touching them: each chunk is handed on
 * as it came (the same Buffer), and a copy decoded beside it is searched for the event that ends
 * the response, whose `response.usage` is kept. Only that event's JSON is parsed.
 */
export class NativeUsageTap {
  private readonly decoder: ServerSentEventDecoder;
  private found: Usage | null = null;
  private done = false;

  constructor(maxEventBytes: number) {
    this.decoder = new ServerSentEventDecoder(maxEventBytes);
  }

  /** The usage of the response, once its final event has passed; null before, or when it had none. */
  get usage(): Usage | null {
    return this.found;
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
      // An event past the size cap: the bytes still go through; only the usage is not known.
      this.done = true;
      return;
    }
    for (const event of events) {
      if (event.event === null ? !isFinalData(event.data) : !FINAL_EVENTS.has(event.event)) continue;
      try {
        const parsed = JSON.parse(event.data) as { type?: unknown; response?: { usage?: unknown } };
        if (typeof parsed.type !== 'string' || !FINAL_EVENTS.has(parsed.type)) continue;
        this.found = toUsage(parsed.response?.usage);
        this.done = true;
      } catch {
        // Not JSON: the client gets it as sent, and judges it.
      }
    }
  }
}

/** A stream without `event:` lines names its type only inside the data. */
function isFinalData(data: string): boolean {
  return data.includes('"response.completed"') || data.includes('"response.incomplete"') || data.includes('"response.failed"');
}
