import type { Usage } from '../provider-adapter.js';
import { isObject } from '../../core/index.js';
import type { AnthropicUsage } from '../../protocols/anthropic-messages/messages-types.js';
import { anthropicUsage, mergeAnthropicUsage } from '../../protocols/anthropic-messages/messages-usage.js';
import { EventTap } from './event-tap.js';
import type { ServerSentEvent } from './server-sent-events.js';

/** The events that carry usage: `message_start` (the input side) and `message_delta` (cumulative, at the end). */
const USAGE_EVENTS = new Set(['message_start', 'message_delta']);

/**
 * Reads a Messages stream's usage as its bytes pass (EventTap: the bytes untouched). Only the
 * events that carry usage are parsed; the deltas between are skipped by their name.
 */
export class MessagesStreamTap {
  private readonly counted: AnthropicUsage = {};
  private readonly events: EventTap;

  constructor(maxEventBytes: number) {
    this.events = new EventTap(maxEventBytes, (event) => this.read(event));
  }

  /** The usage so far, as the gateway records it; null before `message_start`, or when it had none. */
  get usage(): Usage | null {
    return anthropicUsage(this.counted);
  }

  tap(body: AsyncIterableIterator<Buffer>): AsyncGenerator<Buffer> {
    return this.events.tap(body);
  }

  /** True once `message_delta` went by: nothing after it counts. */
  private read(event: ServerSentEvent): boolean {
    if (event.event === null ? !mentionsUsage(event.data) : !USAGE_EVENTS.has(event.event)) return false;
    let parsed: unknown;
    try {
      parsed = JSON.parse(event.data);
    } catch {
      // Not JSON: the client gets it as sent, and judges it.
      return false;
    }
    if (!isObject(parsed)) return false;
    const usage = parsed['type'] === 'message_start' && isObject(parsed['message']) ? parsed['message']['usage'] : parsed['usage'];
    mergeAnthropicUsage(this.counted, usage);
    return parsed['type'] === 'message_delta';
  }
}

/** A stream without `event:` lines names its type only inside the data. */
function mentionsUsage(data: string): boolean {
  return data.includes('"message_start"') || data.includes('"message_delta"');
}
