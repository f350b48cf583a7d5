import type { Readable } from 'node:stream';
import type { ResponseHead } from './response-parser.js';

export interface Http1Request {
  method: 'GET' | 'POST';
  /** The whole path and query, e.g. `/v1/chat/completions`. */
  path: string;
  /** Sent as given, in this order; `host`, `content-length` and `transfer-encoding` are the client's. An object reused across requests is serialised once. */
  headers: Readonly<Record<string, string>>;
  /** Sent as a `traceparent` header after `headers`, never kept (it differs on every request). */
  traceparent?: string;
  /** A Readable is streamed: with `content-length` in `headers` if known, else chunked. */
  body: string | Buffer | Readable | null;
}

/** Told of one call's progress, in this order: sent (once, or per chunk of a streamed body), start, data…, end; or error at any point. */
export interface Http1Handler {
  onRequestSent(): void;
  onResponseStart(statusCode: number, head: ResponseHead): void;
  onResponseData(chunk: Buffer): void;
  onResponseEnd(): void;
  onResponseError(error: Error): void;
}

/** What the caller can do with a call in flight. */
export interface Http1Call {
  /** Ends the call: its handler gets `error`, and a connection it was using is closed. */
  abort(error: Error): void;
  /** Stops reading the response body (TCP backpressure reaches the upstream) until `resume`. */
  pause(): void;
  resume(): void;
  readonly paused: boolean;
}

/** The connection side of a call, as the pool and a connection see it. */
export interface CallSocket {
  abortCall(call: PendingCall, error: Error): void;
  setPaused(paused: boolean): void;
}

/** One request, from dispatch to its end: queued, then bound to a connection, then settled. */
export class PendingCall implements Http1Call {
  /** The connection serving it, while one does. */
  socket: CallSocket | null = null;
  settled = false;
  /** Sent once more, on a new connection, after a reused one turned out to be closed. */
  retried = false;
  private pausedFlag = false;

  constructor(
    readonly request: Http1Request,
    /** The request line and headers, built (and checked) at dispatch. */
    readonly head: string,
    readonly handler: Http1Handler,
    private readonly dequeue: (call: PendingCall) => void,
  ) {}

  get paused(): boolean {
    return this.pausedFlag;
  }

  /**
   * A request that may be sent again after a reused connection closed without answering: only a
   * GET. A connection that dies after the write cannot tell whether the upstream read the request,
   * and a POST it did read (a chat completion, billed) must not run twice; the caller's failover
   * decides what happens next instead.
   */
  get replayable(): boolean {
    return this.request.method === 'GET' && this.request.body === null;
  }

  /**
   * The upstream answered: a body given whole (a string or Buffer, already handed to the socket)
   * is not needed again, and a stream may stay open for minutes, so it is let go of now. A
   * native request's body is tens of kilobytes (Codex resends the conversation every turn).
   */
  answered(): void {
    // The request object is the call's own (made per dispatch), so it is changed in place.
    const { body } = this.request;
    if (typeof body === 'string' || Buffer.isBuffer(body)) this.request.body = null;
  }

  abort(error: Error): void {
    if (this.settled) return;
    if (this.socket !== null) return this.socket.abortCall(this, error);
    this.dequeue(this);
    this.fail(error);
  }

  pause(): void {
    this.pausedFlag = true;
    this.socket?.setPaused(true);
  }

  resume(): void {
    this.pausedFlag = false;
    this.socket?.setPaused(false);
  }

  fail(error: Error): void {
    if (this.settled) return;
    this.settle();
    this.handler.onResponseError(error);
  }

  succeed(): void {
    if (this.settled) return;
    this.settle();
    this.handler.onResponseEnd();
  }

  private settle(): void {
    this.settled = true;
    this.socket = null;
    // A streamed body the upstream did not read to its end (it answered early, or the call failed) is closed: its file with it.
    const { body } = this.request;
    if (body !== null && typeof body !== 'string' && !Buffer.isBuffer(body) && !body.readableEnded) body.destroy();
  }
}
