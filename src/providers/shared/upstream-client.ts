import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { EndpointConfig } from '../../config/index.js';
import { GatewayError } from '../../errors/index.js';
import type { Attempt } from '../provider-adapter.js';
import { ChunkQueue } from './chunk-queue.js';
import { DeadlineWatch, deadlineResolution } from '../../upstream-http/deadline-watch.js';
import { BodyChunks } from './body-chunks.js';
import { classifyAnswer, classifyTransport, type ErrorDialect } from './classify-upstream-failure.js';
import { createTransport } from '../../upstream-http/create-transport.js';
import { readJson, type JsonGuard } from './json-guard.js';
import { describeMediaType, headerValue, isEventStream } from './media-type.js';
import { readEvents, type EventReader } from './read-events.js';
import { TimedCall, type CallTimeouts } from './timed-call.js';
import type { ResponseHeadView, Transport, TransportCall, TransportHandler } from '../../upstream-http/transport.js';

/** Idle upstream connections are closed after this (sooner if the upstream's `Keep-Alive` says so). */
const KEEP_ALIVE_MS = 30_000;
export { headerValue } from './media-type.js';
/** What is kept of an error answer: enough for any provider's message; the rest is not read. */
export const ERROR_BODY_BYTES = 64 * 1024;

export interface UpstreamRequest {
  /** Appended to the base URL's path, e.g. `/chat/completions`. */
  path: string;
  method: 'GET' | 'POST';
  headers: Readonly<Record<string, string>>;
  /** A Readable is streamed; give `content-length` in `headers` with it. */
  body?: string | Buffer | Readable;
  cancellation: AbortSignal;
  /** The credential the headers carry (named in errors), and the router's ear for the answer's head. */
  attempt: Attempt;
}

export interface BufferedResponse {
  readonly statusCode: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/** A successful JSON answer: its bytes (to pass on as they are) and the value its guard checked. */
export interface JsonResponse<T> extends BufferedResponse {
  readonly value: T;
}

/** A 2xx answer's body as it arrives. */
export interface OpenedBody {
  ok: true;
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: AsyncIterableIterator<Buffer>;
}

/** A 2xx answer's body as it arrives; anything else is read whole, to be mapped to an error. */
export type StreamingResponse = OpenedBody | { ok: false; statusCode: number; headers: IncomingHttpHeaders; body: Buffer };

class CancelledError extends Error {
  constructor() {
    super('the caller went away');
    this.name = 'AbortError';
  }
}

/** Headers are parsed only if someone reads them: a successful JSON answer seldom needs them. */
class BufferedUpstreamResponse implements JsonResponse<unknown> {
  /** What the call's JSON guard checked; undefined for a call without one. */
  value: unknown = undefined;

  constructor(
    readonly statusCode: number,
    private readonly head: ResponseHeadView,
    readonly body: Buffer,
  ) {}

  get headers(): IncomingHttpHeaders {
    return this.head.headers;
  }
}

/**
 * Collects one response whole, within caps: a successful answer past `maxResponseBytes` fails the
 * call; of an error answer the first ERROR_BODY_BYTES are kept and the rest is not read. Given the
 * provider's error dialect, an error answer fails the call (classified), and given a guard too, a
 * successful one is parsed and checked: the kit's `postJson`, with no step added after the call.
 */
class BufferingHandler extends TimedCall implements TransportHandler {
  private statusCode = 0;
  private head: ResponseHeadView | null = null;
  private readonly chunks = new BodyChunks();
  call: TransportCall | null = null;

  /** Removes the call's abort listener from the caller's signal, once the call has ended. */
  release: () => void = noRelease;

  constructor(
    timeouts: CallTimeouts,
    attempt: Attempt,
    private readonly resolve: (response: BufferedResponse) => void,
    private readonly reject: (error: unknown) => void,
    private readonly dialect: ErrorDialect | null = null,
    private readonly guard: JsonGuard<unknown> | null = null,
  ) {
    super(timeouts, attempt);
  }

  /** Sent: the first-byte clock starts (a streamed upload restarts it with each chunk). */
  onRequestSent(): void {
    this.sent();
  }

  onResponseStart(statusCode: number, head: ResponseHeadView): void {
    this.statusCode = statusCode;
    this.head = head;
    this.received();
    this.attempt.answered(statusCode, head);
  }

  onResponseData(chunk: Buffer): void {
    this.received();
    const successful = this.statusCode >= 200 && this.statusCode < 300;
    const limit = successful ? this.timeouts.maxResponseBytes : ERROR_BODY_BYTES;
    if (this.chunks.add(chunk, limit)) return;
    if (successful) {
      this.call?.abort(new GatewayError('upstream_invalid_response', `The upstream answer is larger than ${limit} bytes.`));
      return;
    }
    // Enough of the error to map it: answer now and drop the connection instead of reading on.
    this.onResponseEnd();
    this.call?.abort(new CancelledError());
  }

  onResponseEnd(): void {
    this.stopWatching();
    this.release();
    const response = new BufferedUpstreamResponse(this.statusCode, this.head as ResponseHeadView, this.chunks.concat());
    if (this.dialect === null) return this.resolve(response);
    const credentialId = this.attempt.credential.id;
    try {
      if (!isSuccess(response.statusCode))
        throw classifyAnswer(response.statusCode, response.headers, response.body.toString('utf8'), credentialId, this.dialect);
      if (this.guard !== null) response.value = readJson(response.body, this.guard, credentialId);
    } catch (error) {
      return this.reject(error);
    }
    this.resolve(response);
  }

  onResponseError(error: Error): void {
    this.stopWatching();
    this.release();
    this.reject(classifyTransport(error, this.attempt.credential.id));
  }

  protected abortWith(error: Error): void {
    this.call?.abort(error);
  }
}

/** Hands a 2xx body to a ChunkQueue as it arrives; any other answer is read whole. */
class StreamingHandler extends TimedCall implements TransportHandler {
  private queue: ChunkQueue | null = null;
  private statusCode = 0;
  private head: ResponseHeadView | null = null;
  private readonly errorChunks = new BodyChunks();
  call: TransportCall | null = null;

  /** Removes the call's abort listener from the caller's signal, once the call has ended. */
  release: () => void = noRelease;

  constructor(
    timeouts: CallTimeouts,
    attempt: Attempt,
    private readonly resolve: (response: StreamingResponse) => void,
    private readonly reject: (error: unknown) => void,
  ) {
    super(timeouts, attempt);
  }

  onRequestSent(): void {
    this.sent();
  }

  onResponseStart(statusCode: number, head: ResponseHeadView): void {
    this.statusCode = statusCode;
    this.head = head;
    this.received();
    this.attempt.answered(statusCode, head);
    if (statusCode < 200 || statusCode >= 300) return;
    const call = this.call as TransportCall;
    this.queue = new ChunkQueue({
      pause: () => {
        this.stopWatching();
        call.pause();
      },
      resume: () => {
        this.received();
        call.resume();
      },
      abort: () => call.abort(new CancelledError()),
    });
    this.resolve({ ok: true, statusCode, headers: head.headers, body: this.queue });
  }

  onResponseData(chunk: Buffer): void {
    if (this.queue === null) {
      this.received();
      if (this.errorChunks.add(chunk, ERROR_BODY_BYTES)) return;
      // Enough of the error to map it: answer now and drop the connection instead of reading on.
      this.onResponseEnd();
      this.call?.abort(new CancelledError());
      return;
    }
    this.queue.push(chunk);
    // A push past the queue's high-water mark pauses the body, and the clock with it.
    if (this.call?.paused !== true) this.received();
  }

  onResponseEnd(): void {
    this.stopWatching();
    this.release();
    if (this.queue !== null) this.queue.end();
    else this.resolve({ ok: false, statusCode: this.statusCode, headers: (this.head as ResponseHeadView).headers, body: this.errorChunks.concat() });
  }

  onResponseError(error: Error): void {
    this.stopWatching();
    this.release();
    const mapped = classifyTransport(error, this.attempt.credential.id);
    if (this.queue !== null) this.queue.fail(mapped);
    else this.reject(mapped);
  }

  protected abortWith(error: Error): void {
    this.call?.abort(error);
  }
}

/**
 * One keep-alive connection pool per endpoint, shared by its credentials (a Transport, see upstream-http/create-transport.ts),
 * with the three timeouts a streaming upstream needs: connect (the pool's), first byte and idle
 * gaps between body chunks (ours, see DeadlineWatch), and the caps on what is read whole. The
 * transport is the gateway's own HTTP/1.1 client (upstream-http/http1/; docs/upstream-http.md says why): no
 * Node stream, header object or timer is made per call.
 */
export class UpstreamClient {
  /** Largest single event of a stream from this upstream, for the SSE decoder. */
  readonly maxEventBytes: number;
  private readonly pool: Transport;
  private readonly pathPrefix: string;
  private readonly timeouts: CallTimeouts;

  constructor(baseUrl: string, endpoint: EndpointConfig) {
    const url = new URL(baseUrl);
    this.pathPrefix = url.pathname.replace(/\/+$/, '');
    const { connect_ms: connectMs, first_byte_ms: firstByteMs, idle_ms: idleMs, total_ms: totalMs } = endpoint.timeouts;
    this.pool = createTransport(url, { maxConnections: endpoint.max_connections, connectTimeoutMs: connectMs, keepAliveMs: KEEP_ALIVE_MS }, endpoint.network);
    this.timeouts = {
      watch: new DeadlineWatch(deadlineResolution(firstByteMs, idleMs, ...(totalMs === undefined ? [] : [totalMs]))),
      firstByteMs,
      idleMs,
      totalMs: totalMs ?? null,
      maxResponseBytes: endpoint.max_response_bytes,
    };
    this.maxEventBytes = endpoint.max_event_bytes;
  }

  /** The whole response, for JSON answers. */
  requestBuffered(request: UpstreamRequest): Promise<BufferedResponse> {
    return new Promise((resolve, reject) => this.dispatch(request, new BufferingHandler(this.timeouts, request.attempt, resolve, reject)));
  }

  /**
   * A JSON call: a non-2xx answer fails as the provider's dialect reads it (through the one
   * classifier), and a 2xx answer must pass the guard (its wire schema). Nothing is added after
   * the call: the check runs as the answer ends.
   */
  postJson<T>(request: UpstreamRequest, dialect: ErrorDialect, guard: JsonGuard<T>): Promise<JsonResponse<T>> {
    return new Promise((resolve, reject) =>
      this.dispatch(request, new BufferingHandler(this.timeouts, request.attempt, resolve as (response: BufferedResponse) => void, reject, dialect, guard)),
    );
  }

  /** A 2xx answer read whole (audio, a transcript); anything else fails as the provider's dialect reads it. */
  requestOk(request: UpstreamRequest, dialect: ErrorDialect): Promise<BufferedResponse> {
    return new Promise((resolve, reject) => this.dispatch(request, new BufferingHandler(this.timeouts, request.attempt, resolve, reject, dialect)));
  }

  /**
   * The provider's event stream, read by its reader (read-events.ts: the loop, the transport
   * classification and the body's closing, once). A non-2xx answer fails as the dialect reads it,
   * and a 2xx answer that is not an event stream as `upstream_invalid_response`.
   */
  async openEvents<T>(request: UpstreamRequest, dialect: ErrorDialect, reader: EventReader<T>): Promise<AsyncGenerator<T>> {
    const response = await this.openStream(request);
    const credentialId = request.attempt.credential.id;
    if (!response.ok) throw classifyAnswer(response.statusCode, response.headers, response.body.toString('utf8'), credentialId, dialect);
    if (!isEventStream(headerValue(response.headers, 'content-type'))) return refuseMediaType(response, credentialId);
    return readEvents(response.body, reader, credentialId, this.maxEventBytes);
  }

  /**
   * A 2xx answer's body as it arrives (audio; with `eventStream`, events passed on as bytes, which
   * must then be an event stream); anything else fails as the provider's dialect reads it.
   */
  async openBody(request: UpstreamRequest, dialect: ErrorDialect, eventStream = false): Promise<OpenedBody> {
    const response = await (eventStream ? this.openEventStream(request) : this.openStream(request));
    if (!response.ok) throw classifyAnswer(response.statusCode, response.headers, response.body.toString('utf8'), request.attempt.credential.id, dialect);
    return response;
  }

  /** Resolves when the response headers arrive; a 2xx body is then read chunk by chunk. */
  openStream(request: UpstreamRequest): Promise<StreamingResponse> {
    return new Promise((resolve, reject) => this.dispatch(request, new StreamingHandler(this.timeouts, request.attempt, resolve, reject)));
  }

  /**
   * A stream of Server-Sent Events: a 2xx answer of another media type (an HTML error page, a JSON
   * body, nothing) is not what the protocol promises, and fails as `upstream_invalid_response`
   * while another credential can still be tried.
   */
  async openEventStream(request: UpstreamRequest): Promise<StreamingResponse> {
    const response = await this.openStream(request);
    if (!response.ok || isEventStream(headerValue(response.headers, 'content-type'))) return response;
    return refuseMediaType(response, request.attempt.credential.id);
  }

  /** Calls whose timeouts are running, for tests and diagnostics. */
  get timedCalls(): number {
    return this.timeouts.watch.size;
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  private dispatch(request: UpstreamRequest, handler: BufferingHandler | StreamingHandler): void {
    const { traceparent } = request.attempt;
    // The attempt's own span is the upstream's parent: a caller's traceparent is never passed on as it came.
    const call = this.pool.dispatch(
      {
        path: this.pathPrefix + request.path,
        method: request.method,
        headers: request.headers,
        ...(traceparent === undefined || traceparent === null ? {} : { traceparent }),
        body: request.body ?? null,
      },
      handler,
    );
    handler.call = call;
    const signal = request.cancellation;
    if (signal.aborted) return call.abort(new CancelledError());
    // One listener per call, removed when the call ends: a failed-over call no longer needs it,
    // and a signal that outlives many calls must not collect them.
    const onAbort = (): void => call.abort(new CancelledError());
    signal.addEventListener('abort', onAbort, { once: true });
    handler.release = () => signal.removeEventListener('abort', onAbort);
  }
}

function noRelease(): void {}

/** A 2xx answer to a stream request that is not an event stream: the body is dropped, and the call fails. */
async function refuseMediaType(response: OpenedBody, credentialId: string): Promise<never> {
  await response.body.return?.();
  throw new GatewayError(
    'upstream_invalid_response',
    `Upstream ${credentialId} answered a stream request with ${describeMediaType(headerValue(response.headers, 'content-type'))} instead of an event stream.`,
  );
}

function isSuccess(statusCode: number): boolean {
  return statusCode >= 200 && statusCode < 300;
}
