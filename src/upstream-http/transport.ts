import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';

/** One request to an upstream, as a transport sends it. */
export interface TransportRequest {
  method: 'GET' | 'POST';
  /** The whole path and query, e.g. `/v1/chat/completions`. */
  path: string;
  /** Sent as given; `host`, `content-length` and `transfer-encoding` are the transport's. */
  headers: Readonly<Record<string, string>>;
  /**
   * The attempt's W3C trace context, sent as `traceparent` after `headers` while tracing is on.
   * It differs on every request, so it is not in `headers`, which a transport may serialise once
   * per object.
   */
  traceparent?: string;
  /** A Readable is streamed: with `content-length` in `headers` if known, else chunked. */
  body: string | Buffer | Readable | null;
}

/** A response's head: its headers are read only by those who need them (errors, rate limits). */
export interface ResponseHeadView {
  readonly headers: IncomingHttpHeaders;
}

/** Told of one call's progress, in this order: sent, start, data…, end; or error at any point. */
export interface TransportHandler {
  onRequestSent(): void;
  onResponseStart(statusCode: number, head: ResponseHeadView): void;
  onResponseData(chunk: Buffer): void;
  onResponseEnd(): void;
  onResponseError(error: Error): void;
}

/** What the caller can do with a call in flight. */
export interface TransportCall {
  /** Ends the call: its handler gets `error`, and a connection it was using is closed. */
  abort(error: Error): void;
  /** Stops reading the response body (TCP backpressure reaches the upstream) until `resume`. */
  pause(): void;
  resume(): void;
  readonly paused: boolean;
}

/**
 * How the upstream client reaches one origin: a keep-alive connection pool behind a dispatch
 * with handler callbacks (undici's shape). Timeouts of the first byte and of idle gaps, caps and
 * backpressure are the upstream client's, above any transport.
 */
export interface Transport {
  dispatch(request: TransportRequest, handler: TransportHandler): TransportCall;
  close(): Promise<void>;
}

export interface TransportOptions {
  maxConnections: number;
  connectTimeoutMs: number;
  keepAliveMs: number;
}
