import type { Usage } from '../provider-adapter.js';
import { isObject } from '../../core/index.js';
import type { AnthropicUsage } from '../../protocols/anthropic-messages/messages-types.js';
import { anthropicUsage, mergeAnthropicUsage } from '../../protocols/anthropic-messages/messages-usage.js';
import { ServerSentEventDecoder } from './server-sent-events.js';

/** The events that carry usage: `message_start` (the input side) and `message_delta` (cumulative, at the end). */
const USAGE_EVENTS = new Set(['message_start', 'message_delta']);

/**
 * Reads a Messages stream's usage as its bytes pass, without touching them: each chunk is handed
 * on as it came (the same Buffer), and a copy decoded beside it is searched for the events that
 * carry usage. Only those events' JSON is parsed; the deltas between are skipped by their name.
 */
export class MessagesStreamTap {
  private readonly decoder: ServerSentEventDecoder;
  private readonly counted: AnthropicUsage = {};
  private done = false;

  constructor(maxEventBytes: number) {
    this.decoder = new ServerSentEventDecoder(maxEventBytes);
  }

  /** The usage so far, as the gateway records it; null before `message_start`, or when it had none. */
  get usage(): Usage | null {
    return anthropicUsage(this.counted);
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
      if (event.event === null ? !mentionsUsage(event.data) : !USAGE_EVENTS.has(event.event)) continue;
      let parsed: unknown;
      try {
        parsed = JSON.parse(event.data);
      } catch {
        // Not JSON: the client gets it as sent, and judges it.
        continue;
      }
      if (!isObject(parsed)) continue;
      const usage = parsed['type'] === 'message_start' && isObject(parsed['message']) ? parsed['message']['usage'] : parsed['usage'];
      mergeAnthropicUsage(this.counted, usage);
      if (parsed['type'] === 'message_delta') this.done = true;
    }
  }
}

/** A stream without `event:` lines names its type only inside the data. */
function mentionsUsage(data: string): boolean {
  return data.includes('"message_start"') || data.includes('"message_delta"');
}
