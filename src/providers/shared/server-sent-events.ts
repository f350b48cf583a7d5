/** One parsed Server-Sent Event. Comments (`: keep-alive`) are not events and are dropped. */
export interface ServerSentEvent {
  event: string | null;
  data: string;
}

/**
 * An incremental SSE parser (WHATWG event-stream rules) over a byte stream split anywhere:
 * inside a line, inside `\r\n`, or inside a multi-byte UTF-8 character.
 */
export class ServerSentEventDecoder {
  private readonly decoder = new TextDecoder('utf-8');
  private buffer = '';
  private pendingCarriageReturn = false;
  private event: string | null = null;
  private data: string[] = [];

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
    let input = this.buffer + text;
    // A `\r` that ended the previous chunk already closed its line; a `\n` right after it is part of it.
    if (this.pendingCarriageReturn && input.startsWith('\n')) input = input.slice(1);
    this.pendingCarriageReturn = false;
    let start = 0;
    for (let index = 0; index < input.length; index++) {
      const code = input.charCodeAt(index);
      if (code !== 10 && code !== 13) continue;
      this.line(input.slice(start, index), events);
      if (code === 13) {
        if (index + 1 === input.length) this.pendingCarriageReturn = true;
        else if (input.charCodeAt(index + 1) === 10) index++;
      }
      start = index + 1;
    }
    this.buffer = input.slice(start);
    return events;
  }

  private line(line: string, events: ServerSentEvent[]): void {
    if (line === '') {
      if (this.data.length > 0) events.push({ event: this.event, data: this.data.join('\n') });
      this.event = null;
      this.data = [];
      return;
    }
    if (line.charCodeAt(0) === 58) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
  }
}
