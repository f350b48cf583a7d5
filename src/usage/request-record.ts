import { maskSecrets, type RequestTrace, type Usage } from '../core/index.js';
import type { FailureClass, UpstreamFailure } from '../errors/index.js';
import type { LoggedAttempt, UsageSource } from '../store/index.js';

/** One failed upstream attempt, as the request's warn line tells it. */
export interface FailedAttempt {
  upstream: string;
  code: string;
  /** The router's class of the failure (auth, rate_limit, timeout…) and the upstream's status, if it answered. */
  failureClass: FailureClass;
  status: number | null;
  /** What went wrong, with the transport's own words (they are for the log, never for the caller). */
  cause: string;
}

/**
 * What one request did, filled in as it goes by the edge (identity, status, timing) and the
 * services (model, upstream, session, usage), and written to the request log when it ends.
 */
export class RequestRecord {
  readonly createdAt = Date.now();
  readonly startedAt = performance.now();
  tokenId: string | null = null;
  team: string | null = null;
  project: string | null = null;
  model: string | null = null;
  upstream: string | null = null;
  /** The model's name at `upstream` (what the gateway sent it); callers are only ever shown `model`. */
  upstreamModel: string | null = null;
  sessionId: string | null = null;
  sessionSource: string | null = null;
  affinity: string | null = null;
  /** Every upstream attempt, success included, for the request log. Null while there are none. */
  attempts: LoggedAttempt[] | null = null;
  /** In-flight slots held until the response has ended (released by `releaseHeld`). */
  private held: (() => void)[] | null = null;
  firstByteAt: number | null = null;
  usage: Usage | null = null;
  /** What the usage cost by the model's configured price, set once usage is known; null without a price. */
  costUsd: number | null = null;
  /** The caller's `x-ratelimit-*` headers as a flat `[name, value, …]` list, once its limits admitted (or refused) it. */
  limitHeaders: string[] | null = null;
  /** Called once with the request's final usage (null: none) before its row is queued: what settles the caller's limits. */
  onUsage: ((usage: Usage | null) => void) | null = null;
  /** Set once the row's usage is final (onUsage called, or there was none to call): an admission that comes back later settles at once. */
  usageFinal = false;
  /** Set when usage must be counted because the upstream reported none. */
  estimateUsage: (() => Promise<Usage>) | null = null;
  errorCode: string | null = null;
  /** The request line, for the access log: method, and path without the query. */
  method = '';
  path = '';
  /** The client's address: the connection's, or from a trusted proxy the X-Forwarded-For client's (docs/reverse-proxy.md). */
  clientAddress = '';
  /** Attempts that failed, for this request's log lines: which credential, and why. Null while there are none. */
  upstreamFailures: FailedAttempt[] | null = null;
  /** Its trace, while tracing is on (observability/tracing.ts); null otherwise. */
  trace: RequestTrace | null = null;

  constructor(
    /** The gateway's own id: unique, time-ordered, the request log's key. */
    readonly id: string,
    readonly endpoint: string,
    /** The caller's `X-Request-Id`, when valid: echoed on the response instead of `id`. */
    readonly clientRequestId: string | null = null,
  ) {}

  /** The id the response's `X-Request-Id` shows. */
  get publicId(): string {
    return this.clientRequestId ?? this.id;
  }

  /**
   * The client got the first byte of an answer an upstream was called for. A request the gateway
   * refused itself (limits, unknown model, validation) has no first-byte time: the console's
   * "Upstream first byte" would otherwise show the refusal's few milliseconds as an upstream's.
   */
  markFirstByte(): void {
    if (this.upstream === null) return;
    this.firstByteAt ??= performance.now();
  }

  /** Notes an attempt on `upstream` that failed (the next route may still answer). */
  noteUpstreamFailure(upstream: string, error: unknown, failure: UpstreamFailure): void {
    const code = typeof (error as { code?: unknown })?.code === 'string' ? (error as { code: string }).code : 'internal_error';
    (this.upstreamFailures ??= []).push({ upstream, code, failureClass: failure.class, status: failure.status, cause: describeCause(error) });
  }

  noteAttempt(attempt: LoggedAttempt): void {
    (this.attempts ??= []).push(attempt);
    this.trace?.attemptEnded(attempt);
  }

  /** An upstream attempt begins: the `traceparent` to send it, while tracing is on. */
  attemptStarted(credentialId: string, startedAt: number): string | null {
    return this.trace === null ? null : this.trace.attemptStarted(credentialId, startedAt);
  }

  holdUntilFinished(release: () => void): void {
    (this.held ??= []).push(release);
  }

  /** The response has ended (or will never be sent): whatever the request held is let go. */
  releaseHeld(): void {
    const held = this.held;
    if (held === null) return;
    this.held = null;
    for (const release of held) release();
  }

  get usageSource(): UsageSource {
    if (this.usage !== null) return 'upstream';
    return this.estimateUsage === null ? 'none' : 'estimated';
  }
}

/** An error's message with its causes' (`upstream_error: … ← connect ECONNREFUSED 127.0.0.1:9`). */
function describeCause(error: unknown): string {
  const parts: string[] = [];
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 4; current = current.cause, depth++) {
    const code = (current as { code?: unknown }).code;
    parts.push(typeof code === 'string' && !current.message.includes(code) ? `${current.message} (${code})` : current.message);
  }
  return maskSecrets(parts.length === 0 ? String(error) : parts.join(' ← '));
}
