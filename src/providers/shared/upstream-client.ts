import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { EndpointConfig } from '../../config/index.js';
import { GatewayError } from '../../errors/index.js';
import type { Attempt } from '../provider-adapter.js';
import { ChunkQueue } from './chunk-queue.js';
import { DeadlineWatch, deadlineResolution, type WatchedCall } from '../../upstream-http/deadline-watch.js';
import { classifyTransport } from './classify-upstream-failure.js';
import { createTransport } from '../../upstream-http/create-transport.js';
import type { ResponseHeadView, Transport, TransportCall, TransportHandler } from '../../upstream-http/transport.js';

/** Idle upstream connections are closed after this (sooner if the upstream's `Keep-Alive` says so). */
const KEEP_ALIVE_MS = 30_000;
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

/** A 2xx answer's body as it arrives; anything else is read whole, to be mapped to an error. */
export type StreamingResponse =
  | { ok: true; statusCode: number; headers: IncomingHttpHeaders; body: AsyncIterableIterator<Buffer> }
  | { ok: false; statusCode: number; headers: IncomingHttpHeaders; body: Buffer };

class CancelledError extends Error {
  constructor() {
    super('the caller went away');
    this.name = 'AbortError';
  }
}

/** Headers are parsed only if someone reads them: a successful JSON answer seldom needs them. */
class BufferedUpstreamResponse implements BufferedResponse {
  constructor(
    readonly statusCode: number,
    private readonly head: ResponseHeadView,
    readonly body: Buffer,
  ) {}

  get headers(): IncomingHttpHeaders {
    return this.head.headers;
  }
}

/** What a call needs to time itself out: the pool's watch and the upstream's two limits. */
interface CallTimeouts {
  readonly watch: DeadlineWatch;
  readonly firstByteMs: number;
  readonly idleMs: number;
  /** `timeouts.total_ms`: the longest the whole call may take, null for no limit. */
  readonly totalMs: number | null;
  /** Largest successful answer read whole. */
  readonly maxResponseBytes: number;
}

/**
 * The first-byte and idle timeouts of one call. The first-byte clock starts when the request is
 * written to a connection and restarts with each chunk of a streamed upload (as undici's own did:
 * waiting for a free connection, or a slow upload, is not counted), the
 * idle clock restarts on every chunk, and while the gateway itself has paused the body (a slow
 * reader) no clock runs: that silence is ours, not the upstream's.
 */
abstract class TimedCall implements WatchedCall {
  deadline = 0;
  watchSlot = -1;
  private headersReceived = false;
  /** When the whole call must have ended (`total_ms` from its start); Infinity without a limit. */
  private readonly endBy: number;

  protected constructor(
    protected readonly timeouts: CallTimeouts,
    protected readonly attempt: Attempt,
  ) {
    this.endBy = timeouts.totalMs === null ? Infinity : performance.now() + timeouts.totalMs;
  }

  protected abstract abortWith(error: Error): void;

  expire(): void {
    const { firstByteMs, idleMs, totalMs } = this.timeouts;
    const upstreamId = this.attempt.credential.id;
    this.abortWith(
      performance.now() >= this.endBy
        ? new GatewayError('upstream_timeout', `Upstream ${upstreamId} did not finish within total_ms (${totalMs} ms).`)
        : this.headersReceived
          ? new GatewayError('upstream_timeout', `Upstream ${upstreamId} sent nothing for ${idleMs} ms in the middle of its response.`)
          : new GatewayError('upstream_timeout', `Upstream ${upstreamId} sent no response headers within ${firstByteMs} ms.`),
    );
  }

  protected sent(): void {
    this.watchFor(this.timeouts.firstByteMs);
  }

  protected received(): void {
    this.headersReceived = true;
    this.watchFor(this.timeouts.idleMs);
  }

  /** The phase's own limit, or what is left of the total, whichever ends first. */
  private watchFor(phaseMs: number): void {
    this.timeouts.watch.watch(this, Math.min(phaseMs, this.endBy - performance.now()));
  }

  protected stopWatching(): void {
    this.timeouts.watch.unwatch(this);
  }
}

/**
 * Collects one response whole, within caps: a successful answer past `maxResponseBytes` fails the
 * call; of an error answer the first ERROR_BODY_BYTES are kept and the rest is not read.
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
    this.resolve(new BufferedUpstreamResponse(this.statusCode, this.head as ResponseHeadView, this.chunks.concat()));
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

/** Body chunks gathered up to a cap, without copying until the end. */
class BodyChunks {
  private first: Buffer | null = null;
  private rest: Buffer[] | null = null;
  private size = 0;

  /** Adds what fits under `limit`; false when the chunk went past it (what fitted is kept). */
  add(chunk: Buffer, limit: number): boolean {
    const room = limit - this.size;
    const kept = chunk.length <= room ? chunk : chunk.subarray(0, Math.max(room, 0));
    if (kept.length > 0) {
      if (this.first === null) this.first = kept;
      else (this.rest ??= [this.first]).push(kept);
      this.size += kept.length;
    }
    return kept.length === chunk.length;
  }

  concat(): Buffer {
    return this.rest !== null ? Buffer.concat(this.rest) : (this.first ?? Buffer.alloc(0));
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
 * One keep-alive connection pool per endpoint, shared by its credentials (a Transport, see create-transport.ts),
 * with the three timeouts a streaming upstream needs: connect (the pool's), first byte and idle
 * gaps between body chunks (ours, see DeadlineWatch), and the caps on what is read whole. The
 * transport is the gateway's own HTTP/1.1 client (http1/; docs/upstream-http.md says why): no
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
    await response.body.return?.();
    throw new GatewayError('upstream_invalid_response', `Upstream ${request.attempt.credential.id} answered a stream request with ${describeMediaType(headerValue(response.headers, 'content-type'))} instead of an event stream.`);
  }

  /** Calls whose timeouts are running, for tests and diagnostics. */
  get timedCalls(): number {
    return this.timeouts.watch.size;
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  private dispatch(request: UpstreamRequest, handler: BufferingHandler | StreamingHandler): void {
    const call = this.pool.dispatch({ path: this.pathPrefix + request.path, method: request.method, headers: request.headers, body: request.body ?? null }, handler);
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

function isEventStream(contentType: string | undefined): boolean {
  return contentType !== undefined && contentType.trimStart().toLowerCase().startsWith('text/event-stream');
}

function describeMediaType(contentType: string | undefined): string {
  if (contentType === undefined) return 'no content type';
  const mediaType = contentType.split(';', 1)[0]?.trim().slice(0, 64) ?? '';
  return mediaType === '' ? 'no content type' : mediaType;
}

export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
