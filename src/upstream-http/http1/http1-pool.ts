import type { Socket } from 'node:net';
import { connectUpstream, proxyAuthorization, type ConnectTarget, type UpstreamTls } from '../connect-upstream.js';
import { PendingCall, type Http1Call, type Http1Handler, type Http1Request } from './http1-call.js';
import { Http1Connection, type ConnectionOwner } from './http1-connection.js';
import { Http1Error } from './http1-errors.js';
import { requestHead } from './request-head.js';

export interface Http1PoolOptions {
  /** Connections open at once; calls past it wait in order for a free one. */
  maxConnections: number;
  connectTimeoutMs: number;
  /** How long an idle connection is kept (shortened by the upstream's `Keep-Alive: timeout`). */
  keepAliveMs: number;
  /** Extra CAs and a client certificate for an https upstream. */
  tls?: UpstreamTls;
  /** Connections go through this proxy: a CONNECT tunnel for https, absolute-form requests for http. */
  proxy?: URL | null;
}

/** Closed this long before the upstream's own idle limit, so that it never closes one we are writing to. */
const KEEP_ALIVE_MARGIN_MS = 1_000;

/**
 * Keep-alive HTTP/1.1 connections to one origin (http or https): idle connections are reused
 * newest first, calls past `maxConnections` wait in order, idle connections expire. A call whose
 * reused connection turns out to have been closed by the upstream before it answered a single
 * byte is sent once more on another connection, as browsers do: the upstream never saw it.
 */
export class Http1Pool implements ConnectionOwner {
  readonly hostHeader: string;
  private readonly target: Omit<ConnectTarget, 'timeoutMs'>;
  /** For an http upstream behind a proxy: what goes before each path, and the proxy's credentials. */
  private readonly forwardPrefix: string;
  private readonly forwardHeaders: string;
  private readonly idle: Http1Connection[] = [];
  private readonly waiting: PendingCall[] = [];
  private waitingHead = 0;
  private connections = 0;
  private connecting = 0;
  private sweepTimer: NodeJS.Timeout | null = null;
  private closing = false;
  private onDrained: (() => void) | null = null;
  private readonly dequeue = (call: PendingCall): void => {
    const index = this.waiting.indexOf(call, this.waitingHead);
    if (index !== -1) this.waiting.splice(index, 1);
  };

  constructor(
    origin: URL,
    private readonly options: Http1PoolOptions,
  ) {
    if (origin.protocol !== 'http:' && origin.protocol !== 'https:') throw new TypeError(`unsupported upstream protocol ${origin.protocol}`);
    this.hostHeader = origin.host;
    const secure = origin.protocol === 'https:';
    const proxy = options.proxy ?? null;
    this.target = {
      host: origin.hostname.startsWith('[') ? origin.hostname.slice(1, -1) : origin.hostname,
      port: origin.port === '' ? (secure ? 443 : 80) : Number(origin.port),
      secure,
      alpn: ['http/1.1'],
      tls: options.tls ?? {},
      proxy,
    };
    const forwarded = proxy !== null && !secure;
    const authorization = forwarded ? proxyAuthorization(proxy) : null;
    this.forwardPrefix = forwarded ? `http://${origin.host}` : '';
    this.forwardHeaders = authorization === null ? '' : `proxy-authorization: ${authorization}\r\n`;
  }

  /** Throws a TypeError, before anything is sent, for a header or path that could split the request. */
  dispatch(request: Http1Request, handler: Http1Handler): Http1Call {
    const call = new PendingCall(request, requestHead(request, this.hostHeader, this.forwardPrefix, this.forwardHeaders), handler, this.dequeue);
    if (this.closing) call.fail(new Http1Error('HTTP1_POOL_CLOSED', 'the upstream client is closed'));
    else this.schedule(call);
    return call;
  }

  /** Connections open now (busy or idle), for tests and diagnostics. */
  get size(): number {
    return this.connections;
  }

  /** Stops taking calls, fails those waiting, closes idle connections; resolves once the busy ones have finished. */
  close(): Promise<void> {
    this.closing = true;
    // Those before waitingHead are already on a connection, and finish there.
    for (const call of this.waiting.slice(this.waitingHead)) call.fail(new Http1Error('HTTP1_POOL_CLOSED', 'the upstream client is closed'));
    this.waiting.length = 0;
    this.waitingHead = 0;
    for (const connection of this.idle.splice(0)) connection.socket.destroy();
    if (this.connections === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.onDrained = resolve;
    });
  }

  released(connection: Http1Connection, reusable: boolean): void {
    if (!reusable || this.closing) {
      connection.socket.destroy();
      return;
    }
    const next = this.nextWaiting();
    if (next !== undefined) return connection.assign(next);
    connection.idleSince = performance.now();
    this.idle.push(connection);
    this.armSweep();
  }

  closed(connection: Http1Connection, call: PendingCall | null, error: Error): void {
    this.connections--;
    const index = this.idle.indexOf(connection);
    if (index !== -1) this.idle.splice(index, 1);
    if (call !== null) {
      if (connection.served > 0 && connection.answeredNothing && call.replayable && !call.retried && !this.closing) {
        // On a new connection: another idle one may have been closed by the upstream just as well.
        call.retried = true;
        call.socket = null;
        this.waiting.push(call);
      } else call.fail(error);
    }
    this.connectIfNeeded();
    if (this.connections === 0) this.onDrained?.();
  }

  private schedule(call: PendingCall): void {
    const connection = this.takeIdle();
    if (connection !== undefined) return connection.assign(call);
    this.waiting.push(call);
    this.connectIfNeeded();
  }

  /** The most recently used idle connection that the upstream has not given up on yet (the sweep runs only now and then). */
  private takeIdle(): Http1Connection | undefined {
    const now = performance.now();
    for (let connection = this.idle.pop(); connection !== undefined; connection = this.idle.pop()) {
      // One the upstream has already half-closed is dropped here rather than written to.
      if (now - connection.idleSince < this.idleLimit(connection) && !connection.socket.readableEnded) return connection;
      connection.socket.destroy();
    }
    return undefined;
  }

  private idleLimit(connection: Http1Connection): number {
    return Math.min(this.options.keepAliveMs, connection.keepAliveHintMs - KEEP_ALIVE_MARGIN_MS);
  }

  private nextWaiting(): PendingCall | undefined {
    if (this.waitingHead >= this.waiting.length) return undefined;
    const call = this.waiting[this.waitingHead] as PendingCall;
    this.waitingHead++;
    // Compacted now and then instead of a shift() per call.
    if (this.waitingHead === this.waiting.length) {
      this.waiting.length = 0;
      this.waitingHead = 0;
    } else if (this.waitingHead > 1024) {
      this.waiting.splice(0, this.waitingHead);
      this.waitingHead = 0;
    }
    return call;
  }

  /** Opens connections for waiting calls, one per call, within the limit. */
  private connectIfNeeded(): void {
    const waiting = this.waiting.length - this.waitingHead;
    while (this.connecting < waiting && this.connections < this.options.maxConnections && !this.closing) this.open();
  }

  private open(): void {
    this.connections++;
    this.connecting++;
    connectUpstream({ ...this.target, timeoutMs: this.options.connectTimeoutMs }, (error, socket) => {
      this.connecting--;
      if (error !== null) {
        this.connections--;
        // A failed connect fails the call that has waited longest, so an unreachable upstream fails fast (and fails over).
        this.nextWaiting()?.fail(error);
        this.connectIfNeeded();
        if (this.connections === 0) this.onDrained?.();
        return;
      }
      const connection = new Http1Connection(socket as Socket, this);
      (socket as Socket).setNoDelay(true);
      (socket as Socket).setKeepAlive(true, 60_000);
      this.released(connection, true);
    });
  }

  private armSweep(): void {
    if (this.sweepTimer !== null) return;
    this.sweepTimer = setTimeout(this.sweep, Math.max(250, Math.min(this.options.keepAliveMs, 5_000) / 2));
    this.sweepTimer.unref();
  }

  /** Closes connections idle for longer than they may be; the oldest are at the bottom of the stack. */
  private readonly sweep = (): void => {
    this.sweepTimer = null;
    const now = performance.now();
    let expired = 0;
    for (const connection of this.idle) {
      if (now - connection.idleSince < this.idleLimit(connection)) break;
      expired++;
    }
    for (const connection of this.idle.splice(0, expired)) connection.socket.destroy();
    if (this.idle.length > 0) this.armSweep();
  };
}
