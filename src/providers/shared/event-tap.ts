import { ServerSentEventDecoder, type ServerSentEvent } from './server-sent-events.js';

/**
 * Reads an upstream's Server-Sent Events as their bytes pass, without touching them: each chunk is
 * handed on as it came (the same Buffer), and a copy decoded beside it is told to `read`, event by
 * event, until `read` says it has seen what it wanted. An event past the size cap still goes
 * through; only what it said is not read.
 */
export class EventTap {
  private readonly decoder: ServerSentEventDecoder;
  private done = false;

  constructor(
    maxEventBytes: number,
    /** Told each event; true once nothing more is wanted of the stream. */
    private readonly read: (event: ServerSentEvent) => boolean,
  ) {
    this.decoder = new ServerSentEventDecoder(maxEventBytes);
  }

  async *tap(body: AsyncIterableIterator<Buffer>): AsyncGenerator<Buffer> {
    try {
      for await (const chunk of body) {
        if (!this.done) this.decode(chunk);
        yield chunk;
      }
    } finally {
      await body.return?.();
    }
  }

  private decode(chunk: Buffer): void {
    let events;
    try {
      events = this.decoder.push(chunk);
    } catch {
      this.done = true;
      return;
    }
    for (const event of events) {
      if (this.read(event)) {
        this.done = true;
        return;
      }
    }
  }
}
