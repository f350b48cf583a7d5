import type { Usage } from '../providers/provider-adapter.js';
import type { UsageSource } from '../store/index.js';

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
  sessionId: string | null = null;
  firstByteAt: number | null = null;
  usage: Usage | null = null;
  /** Set when usage must be counted because the upstream reported none. */
  estimateUsage: (() => Promise<Usage>) | null = null;
  errorCode: string | null = null;

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

  markFirstByte(): void {
    this.firstByteAt ??= performance.now();
  }

  get usageSource(): UsageSource {
    if (this.usage !== null) return 'upstream';
    return this.estimateUsage === null ? 'none' : 'estimated';
  }
}
