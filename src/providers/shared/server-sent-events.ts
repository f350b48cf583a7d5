import { GatewayError } from '../../errors/index.js';

/** One parsed Server-Sent Event. Comments (`: keep-alive`) are not events and are dropped. */
export interface ServerSentEvent {
  event: string | null;
  data: string;
}

/** `upstreams[].max_event_bytes`' default: far above any chat chunk, room for an inline image. */
export const DEFAULT_MAX_EVENT_BYTES = 16 * 1024 * 1024;

/**
 * An incremental SSE parser (WHATWG event-stream rules) over a byte stream split anywhere:
 * inside a line, inside `\r\n`, or inside a multi-byte UTF-8 character. Each byte is scanned once
 * (a line cut across many pushes is kept as pieces and joined when it ends), and an event larger
 * than `maxEventSize` fails the stream instead of growing without end.
 */
export class ServerSentEventDecoder {
  private readonly decoder = new TextDecoder('utf-8');
  /** The current line so far, when it spans pushes. */
  private partial: string[] = [];
  private partialLength = 0;
  private pendingCarriageReturn = false;
  private event: string | null = null;
  private data: string[] = [];
  private dataLength = 0;

  /** `maxEventSize` counts UTF-16 code units of the event's lines, never more than their bytes. */
  constructor(private readonly maxEventSize: number = DEFAULT_MAX_EVENT_BYTES) {}

  /** Feeds bytes and returns every event completed by them. */
  push(chunk: Uint8Array): ServerSentEvent[] {
    return this.consume(this.decoder.decode(chunk, { stream: true }));
  }

  /** Ends the stream; an event without its closing blank line is discarded, as the spec says. */
  end(): ServerSentEvent[] {
    return this.consume(this.decoder.decode());
  }

  private consume(text: string): ServerSentEvent[] {
    const events: ServerSentEvent[] = [];
    let start = 0;
    // A `\r` that ended the previous chunk already closed its line; a `\n` right after it is part of it.
    if (this.pendingCarriageReturn && text.charCodeAt(0) === 10) start = 1;
    if (text.length > 0) this.pendingCarriageReturn = false;
    for (let index = start; index < text.length; index++) {
      const code = text.charCodeAt(index);
      if (code !== 10 && code !== 13) continue;
      this.line(this.completeLine(text.slice(start, index)), events);
      if (code === 13) {
        if (index + 1 === text.length) this.pendingCarriageReturn = true;
        else if (text.charCodeAt(index + 1) === 10) index++;
      }
      start = index + 1;
    }
    if (start < text.length) {
      const rest = start === 0 ? text : text.slice(start);
      this.partial.push(rest);
      this.partialLength += rest.length;
      this.checkSize(this.partialLength);
    }
    return events;
  }

  private completeLine(tail: string): string {
    if (this.partialLength === 0) return tail;
    this.partial.push(tail);
    const line = this.partial.join('');
    this.partial = [];
    this.partialLength = 0;
    return line;
  }

  private line(line: string, events: ServerSentEvent[]): void {
    if (line === '') {
      if (this.data.length > 0) events.push({ event: this.event, data: this.data.join('\n') });
      this.event = null;
      this.data = [];
      this.dataLength = 0;
      return;
    }
    if (line.charCodeAt(0) === 58) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') {
      this.data.push(value);
      this.dataLength += value.length + 1;
      this.checkSize(0);
    } else if (field === 'event') {
      this.event = value;
    }
  }

  private checkSize(partialLength: number): void {
    if (this.dataLength + partialLength <= this.maxEventSize) return;
    throw new GatewayError('upstream_invalid_response', `The upstream sent a stream event larger than ${this.maxEventSize} bytes.`);
  }
}
