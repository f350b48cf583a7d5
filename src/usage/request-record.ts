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
    readonly id: string,
    readonly endpoint: string,
  ) {}

  markFirstByte(): void {
    this.firstByteAt ??= performance.now();
  }

  get usageSource(): UsageSource {
    if (this.usage !== null) return 'upstream';
    return this.estimateUsage === null ? 'none' : 'estimated';
  }
}
