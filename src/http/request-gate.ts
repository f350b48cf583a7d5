import type { IncomingMessage, ServerResponse } from 'node:http';
import { requireScope, type CallerLimits, type Principal, type Scope, type TokenAuthenticator } from '../access/index.js';
import { SwapList, TrustedProxies, type RequestTracing } from '../core/index.js';
import { GatewayError } from '../errors/index.js';
import { RequestRecord, type RequestRecorder } from '../usage/index.js';
import { sendError } from './send-response.js';

/** A request whose response has not closed yet. */
interface OpenRequest {
  readonly response: ServerResponse;
  readonly record: RequestRecord;
  readonly controller: AbortController;
  listSlot: number;
}

export interface TrackedRequest {
  record: RequestRecord;
  /** Aborted when the client leaves before its response is complete, or at the shutdown deadline. */
  cancellation: AbortSignal;
}

/**
 * The state behind the pipeline's stages (pipeline.ts): shutdown refusal, the request-log record
 * of every open request, and the bearer-token check; also what answers requests from outside
 * their route (the body timeout, the shutdown deadline).
 */
export class RequestGate {
  /** Set by `drain`: `/ready` fails and every answer closes its connection, but requests are served. */
  private leaving = false;
  private closing = false;
  /** Shutdown waits on these: told once no request is open any more. */
  private idleWaiters: (() => void)[] = [];
  /** Requests whose response has not closed yet, for the answers given from outside their route (body timeout, shutdown); not a Map (core/swap-list.ts says why). */
  private readonly open = new SwapList<OpenRequest>();

  constructor(
    private readonly authenticator: TokenAuthenticator,
    private readonly recorder: RequestRecorder,
    /** Logs what failed inside a response's `close` listener, which must never throw. */
    private readonly onListenerError: (error: unknown) => void = () => undefined,
    /** The callers' rate limits and quotas; null: none are enforced. */
    private readonly limits: CallerLimits | null = null,
    /** Whose `X-Forwarded-For` names the client in the logs (`server.trusted_proxies`). */
    private readonly proxies: TrustedProxies = TrustedProxies.none,
    /** Starts each request's trace; null while tracing is off. */
    private readonly tracing: RequestTracing | null = null,
  ) {}

  /**
   * The start of a shutdown (`server.drain_delay_ms`): `/ready` answers 503 and every answer
   * closes its connection (`Connection: close`), so that a load balancer moves away and drops the
   * connections it keeps, while what it still sends is served.
   */
  drain(): void {
    this.leaving = true;
  }

  /** From now on requests are refused with 503 `shutting_down` (the connection is closed after the answer). */
  close(): void {
    this.leaving = true;
    this.closing = true;
  }

  /** Whether the gateway is draining (`drain` or `close` was called): `/ready` answers 503, answers close their connections. */
  get draining(): boolean {
    return this.leaving;
  }

  /** Resolves once no request is open (at once when none is). */
  whenIdle(): Promise<void> {
    if (this.open.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Open requests by endpoint, and of them those streaming (their head sent, their body not
   * ended: a stream of events or bytes under way), for the gauges read at a scrape.
   */
  openByEndpoint(): Map<string, { open: number; streaming: number }> {
    const counts = new Map<string, { open: number; streaming: number }>();
    for (const { record, response } of this.open.values()) {
      let count = counts.get(record.endpoint);
      if (count === undefined) {
        count = { open: 0, streaming: 0 };
        counts.set(record.endpoint, count);
      }
      count.open++;
      if (response.headersSent && !response.writableEnded) count.streaming++;
    }
    return counts;
  }

  /** A request that arrives on a kept-alive connection during shutdown: refuse it and let the client reconnect elsewhere. */
  refusal(): GatewayError | null {
    return this.closing ? shuttingDown() : null;
  }

  /** Starts the request-log row; it is written when the response closes, complete or not. */
  track(request: IncomingMessage, response: ServerResponse, id: string, endpoint: string, clientRequestId: string | null): TrackedRequest {
    const record = new RequestRecord(id, endpoint, clientRequestId);
    record.method = request.method ?? '';
    record.path = request.url ?? '';
    record.clientAddress = this.proxies.clientOf(request.socket.remoteAddress, request.headers['x-forwarded-for']);
    if (this.tracing !== null)
      record.trace = this.tracing.start(endpoint, oneHeader(request.headers.traceparent), oneHeader(request.headers.tracestate), record.createdAt);
    const controller = new AbortController();
    const { recorder, open } = this;
    recorder.begin();
    const entry: OpenRequest = { response, record, controller, listSlot: -1 };
    open.add(entry);
    // One listener per request does both jobs: stop the upstream call if the client left, and log.
    // It runs outside any request's promise chain: an exception here would reach the process.
    response.on('close', () => {
      open.remove(entry);
      if (open.size === 0 && this.idleWaiters.length > 0) this.tellIdle();
      try {
        if (response.writableFinished) return recorder.finish(record, response.statusCode);
        controller.abort(clientGone());
        recorder.finishIncomplete(record);
      } catch (error) {
        this.onListenerError(error);
      }
    });
    return { record, cancellation: controller.signal };
  }

  private tellIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** The record of the request a response belongs to, while it is open. */
  find(response: ServerResponse): RequestRecord | undefined {
    // A linear search: only the body timeout asks, for a request it gives up on.
    return this.open.find((entry) => entry.response === response)?.record;
  }

  /**
   * At the shutdown deadline: every request still waiting for its upstream is answered 503
   * `shutting_down` (instead of an empty reply when its connection is cut) and its upstream call
   * stopped. Streams already under way are left for the caller to cut.
   */
  answerPending(): void {
    for (const { response, record, controller } of this.open.values()) {
      if (response.headersSent) continue;
      record.errorCode = 'shutting_down';
      sendError(response, shuttingDown(), ['x-request-id', record.publicId, 'connection', 'close']);
      controller.abort(shuttingDown());
    }
  }

  /**
   * The caller's identity, checked against the scope the route needs. Synchronous unless the token
   * table is being reloaded; throws (or rejects with) a GatewayError when the token does not pass.
   */
  admit(authorization: string | undefined, scope: Scope, record: RequestRecord | null): Principal | Promise<Principal> {
    const principal = this.authenticator.authenticate(authorization);
    if (principal instanceof Promise) return principal.then((resolved) => checked(resolved, scope, record));
    return checked(principal, scope, record);
  }

  /** A principal found another way (the console's session) checked as `admit` checks a bearer token's. */
  checked(principal: Principal, scope: Scope, record: RequestRecord | null): Principal {
    return checked(principal, scope, record);
  }

  /**
   * Counts the request against its token's, project's and team's limits, or refuses it: rejects
   * with the 429. Either way the response gets the `x-ratelimit-*` headers. An admitted request is
   * settled when its usage is known. Null (nothing to wait for) when no limit applies.
   */
  limit(principal: Principal, record: RequestRecord, estimatedTokens: number): Promise<void> | null {
    const { limits } = this;
    if (limits === null || principal.holders.length === 0) return null;
    return limits.admit(principal.holders, estimatedTokens, record.createdAt).then((result) => {
      // Kept on the record: every response writes its headers from it (session-headers.ts).
      record.limitHeaders = result.headers;
      if (result.refusal !== null) throw result.refusal;
      const { admission } = result;
      // The client left while the admission was on its way: the row is written, nothing ran, and
      // the slot would otherwise be held (and renewed by the heartbeat) with nobody to give it back.
      if (record.usageFinal) return limits.settle(admission, 0, 0);
      record.onUsage = (usage) => limits.settle(admission, usage === null ? 0 : usage.promptTokens + usage.completionTokens, record.costUsd ?? 0);
    });
  }
}

function oneHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The reason a call is aborted with when its client left: engines that reject with it say why. */
function clientGone(): GatewayError {
  return new GatewayError('upstream_error', 'The client went away.', { retryable: false });
}

function shuttingDown(): GatewayError {
  return new GatewayError('shutting_down', 'The gateway is shutting down; retry on another instance.', { retryAfterSeconds: 1 });
}

function checked(principal: Principal, scope: Scope, record: RequestRecord | null): Principal {
  if (record !== null) {
    record.tokenId = principal.tokenId;
    record.team = principal.team;
    record.project = principal.project;
  }
  requireScope(principal, scope);
  return principal;
}
