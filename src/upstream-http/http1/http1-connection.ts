import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { Http1Error } from './http1-errors.js';
import type { CallSocket, PendingCall } from './http1-call.js';
import { writeAtEndOfTurn, type BatchedWrite } from './write-batch.js';
import { ResponseParser, type ResponseHead, type ResponseSink } from './response-parser.js';

/** What a connection reports to its pool. */
export interface ConnectionOwner {
  /** The connection finished a call and may serve another (`reusable`), or must be dropped. */
  released(connection: Http1Connection, reusable: boolean): void;
  /** The socket closed; `call` was in flight on it and is to be retried or failed. */
  closed(connection: Http1Connection, call: PendingCall | null, error: Error): void;
}

/**
 * One keep-alive connection to an upstream, serving one call at a time (no pipelining): writes
 * the request, feeds the socket's bytes to a response parser, and hands the pool back a connection
 * only when its last response ended cleanly.
 */
export class Http1Connection implements ResponseSink, CallSocket, BatchedWrite {
  private call: PendingCall | null = null;
  /** A call bound here whose request waits for the end of the turn. */
  private unwritten: PendingCall | null = null;
  private readonly parser = new ResponseParser(this);
  private responseEnded = false;
  private requestWritten = false;
  private socketError: Error | null = null;
  /** Calls this connection has finished: a reused connection may have been closed by the upstream meanwhile. */
  served = 0;
  /** When it became idle (`performance.now()`), and how long the upstream says it keeps idle connections. */
  idleSince = 0;
  keepAliveHintMs = Number.POSITIVE_INFINITY;

  constructor(
    readonly socket: Socket,
    private readonly owner: ConnectionOwner,
  ) {
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('end', () => this.onSocketEnd());
    socket.on('error', (error: Error) => {
      this.socketError ??= error;
    });
    socket.on('close', () => this.onClose());
  }

  /** Serves `call`: binds it, and writes its request at the end of this event-loop turn. */
  assign(call: PendingCall): void {
    this.call = call;
    call.socket = this;
    this.parser.reset();
    this.responseEnded = false;
    this.requestWritten = false;
    // resume() on a flowing socket still schedules a tick: only when it is paused.
    if (call.paused) this.socket.pause();
    else if (this.socket.isPaused()) this.socket.resume();
    this.unwritten = call;
    writeAtEndOfTurn(this);
  }

  flushWrite(): void {
    const call = this.unwritten;
    this.unwritten = null;
    // Aborted, or the connection lost, before its turn came.
    if (call === null || this.call !== call || this.socket.destroyed) return;
    const { request, head } = call;
    const { body } = request;
    if (body === null || typeof body === 'string') {
      this.socket.write(body === null ? head : head + body);
      this.requestWritten = true;
      call.handler.onRequestSent();
    } else if (Buffer.isBuffer(body)) {
      this.socket.cork();
      this.socket.write(head);
      this.socket.write(body);
      this.socket.uncork();
      this.requestWritten = true;
      call.handler.onRequestSent();
    } else {
      this.socket.write(head);
      const declared = request.headers['content-length'];
      this.streamBody(call, body, declared === undefined ? null : Number(declared));
    }
  }

  abortCall(call: PendingCall, error: Error): void {
    if (this.call !== call) return;
    this.call = null;
    this.socket.destroy();
    call.fail(error);
  }

  setPaused(paused: boolean): void {
    if (paused) this.socket.pause();
    else this.socket.resume();
  }

  onHead(statusCode: number, head: ResponseHead): void {
    const call = this.call;
    if (call === null) return;
    call.answered();
    call.handler.onResponseStart(statusCode, head);
  }

  onBody(chunk: Buffer): void {
    this.call?.handler.onResponseData(chunk);
  }

  onEnd(): void {
    this.responseEnded = true;
  }

  /**
   * Sends a Readable body: exactly `length` bytes, or chunked when the length is not known. A body
   * longer or shorter than it declared fails the call: sent on, the upstream would read the rest as
   * another request, or wait for bytes that never come. An upstream that answers before reading the
   * whole body is done with it: the rest is not sent.
   */
  private streamBody(call: PendingCall, body: Readable, length: number | null): void {
    const socket = this.socket;
    const chunked = length === null;
    let sent = 0;
    const mismatch = () => call.abort(new Http1Error('HTTP1_BODY', `the request body is not the ${length} bytes its content-length says (${sent} so far)`));
    const onDrain = () => body.resume();
    const cleanUp = () => {
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', onError);
      socket.off('drain', onDrain);
    };
    const onData = (data: Buffer | string) => {
      if (this.call !== call) return cleanUp();
      const chunk = typeof data === 'string' ? Buffer.from(data) : data;
      // An empty chunk would read as the end of a chunked body.
      if (chunk.length === 0) return;
      sent += chunk.length;
      if (length !== null && sent > length) {
        cleanUp();
        return mismatch();
      }
      let written: boolean;
      if (chunked) {
        socket.cork();
        socket.write(`${chunk.length.toString(16)}\r\n`);
        socket.write(chunk);
        written = socket.write('\r\n');
        socket.uncork();
      } else written = socket.write(chunk);
      call.handler.onRequestSent();
      if (!written) body.pause();
    };
    const onEnd = () => {
      cleanUp();
      if (this.call !== call) return;
      if (length !== null && sent !== length) return mismatch();
      if (chunked) socket.write('0\r\n\r\n');
      this.requestWritten = true;
      this.finishIfEnded();
    };
    const onError = (error: Error) => {
      cleanUp();
      call.abort(new Http1Error('HTTP1_BODY', `the request body failed: ${error.message}`, { cause: error }));
    };
    body.on('data', onData);
    body.on('end', onEnd);
    body.on('error', onError);
    socket.on('drain', onDrain);
  }

  private onData(chunk: Buffer): void {
    if (this.call === null) {
      // Bytes nobody asked for: the upstream is out of step with us, and this connection is unusable.
      this.socket.destroy();
      return;
    }
    try {
      this.parser.execute(chunk);
    } catch (error) {
      const call = this.call;
      this.call = null;
      this.socket.destroy();
      // A complete response followed by stray bytes still stands; only the connection is lost.
      if (this.responseEnded && call !== null) call.succeed();
      else call?.fail(error as Error);
      return;
    }
    this.finishIfEnded();
  }

  private onSocketEnd(): void {
    const call = this.call;
    if (call === null) return;
    try {
      this.parser.end();
    } catch {
      // Closed mid-response: reported by `close`, which follows.
      return;
    }
    this.finishIfEnded();
  }

  /** The response is complete: the call succeeds. An upstream that answered before reading the whole body is done with it; that connection is dropped. */
  private finishIfEnded(): void {
    const call = this.call;
    if (call === null || !this.responseEnded) return;
    this.call = null;
    this.served++;
    if (this.parser.keepAliveHintMs !== null) this.keepAliveHintMs = this.parser.keepAliveHintMs;
    this.owner.released(this, this.requestWritten && this.parser.keepAlive && !this.socket.readableEnded && !this.socket.destroyed);
    call.succeed();
  }

  private onClose(): void {
    const call = this.call;
    this.call = null;
    const error = this.socketError ?? new Http1Error('HTTP1_SOCKET_CLOSED', 'the upstream closed the connection');
    // A call bound here is told by the pool (it may be retried on a new connection).
    this.owner.closed(this, call !== null && !call.settled ? call : null, error);
  }

  /** No byte of the current response has arrived (a dead kept-alive connection looks like this). */
  get answeredNothing(): boolean {
    return this.parser.receivedBytes === 0;
  }
}
