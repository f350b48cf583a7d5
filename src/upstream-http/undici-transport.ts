import type { IncomingHttpHeaders } from 'node:http';
import { pipeline, Readable, Transform } from 'node:stream';
import { Pool, type Dispatcher } from 'undici';
import { connectUpstream, type ConnectTarget } from './connect-upstream.js';
import type { Transport, TransportCall, TransportHandler, TransportOptions, TransportRequest } from './transport.js';

/**
 * undici's `Pool` for one https origin, for endpoints with `network.http2: true`: it offers `h2`
 * and `http/1.1` by ALPN and speaks whichever the upstream picks (many streams on one connection
 * with h2). Connections are opened by the gateway's own connector (connect-upstream.ts), so the
 * proxy tunnel, the extra CAs and the client certificate are the same as over HTTP/1.1. undici's
 * header and body timeouts are off: the upstream client runs the first-byte and idle clocks
 * itself, so that time the gateway holds a body back for a slow client is not counted.
 */
export class UndiciTransport implements Transport {
  private readonly pool: Pool;

  constructor(origin: URL, options: TransportOptions, target: Omit<ConnectTarget, 'timeoutMs' | 'alpn'>) {
    const connectTarget: ConnectTarget = { ...target, alpn: ['h2', 'http/1.1'], timeoutMs: options.connectTimeoutMs };
    this.pool = new Pool(origin.origin, {
      connections: options.maxConnections,
      allowH2: true,
      pipelining: 1,
      keepAliveTimeout: options.keepAliveMs,
      keepAliveMaxTimeout: options.keepAliveMs,
      headersTimeout: 0,
      bodyTimeout: 0,
      connect: (_options, callback) =>
        connectUpstream(connectTarget, (error, socket) => (error === null ? callback(null, socket as NonNullable<typeof socket>) : callback(error, null))),
    });
  }

  dispatch(request: TransportRequest, handler: TransportHandler): TransportCall {
    const call = new UndiciCall(handler);
    const { body } = request;
    this.pool.dispatch(
      {
        path: request.path,
        method: request.method,
        headers: request.traceparent === undefined ? request.headers : { ...request.headers, traceparent: request.traceparent },
        body: body instanceof Readable ? notifyingEachChunk(body, handler) : body,
      },
      call,
    );
    return call;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** undici's handler for one call, and the caller's handle on it. */
class UndiciCall implements Dispatcher.DispatchHandler, TransportCall {
  private controller: Dispatcher.DispatchController | null = null;
  private pendingAbort: Error | null = null;
  private pausedFlag = false;

  constructor(private readonly handler: TransportHandler) {}

  get paused(): boolean {
    return this.pausedFlag;
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.pendingAbort !== null) return controller.abort(this.pendingAbort);
    this.handler.onRequestSent();
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (this.pausedFlag) controller.pause();
    this.handler.onResponseStart(statusCode, { headers });
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.handler.onResponseData(chunk);
  }

  onResponseEnd(): void {
    this.handler.onResponseEnd();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.handler.onResponseError(error);
  }

  abort(error: Error): void {
    if (this.controller === null) this.pendingAbort = error;
    else this.controller.abort(error);
  }

  pause(): void {
    this.pausedFlag = true;
    this.controller?.pause();
  }

  resume(): void {
    this.pausedFlag = false;
    this.controller?.resume();
  }
}

/**
 * A streamed upload (a transcription's file) tells the handler of each chunk it hands on, so that
 * the first-byte clock restarts while the upload is still going: a slow upload is not a silent
 * upstream. Joined by `pipeline`, so that when undici lets the relay go before the upload's end (the
 * upstream answered early, the call was aborted) the upload is closed too, its file with it, as the
 * HTTP/1.1 pool does; `pipe` would leave it paused and open.
 */
function notifyingEachChunk(body: Readable, handler: TransportHandler): Readable {
  const relay = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      handler.onRequestSent();
      callback(null, chunk);
    },
  });
  // The call's own error reaches the handler through undici; this callback has nothing to add.
  return pipeline(body, relay, ignore);
}

function ignore(): void {}
