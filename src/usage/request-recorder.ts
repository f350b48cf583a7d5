import type { RequestLogEntry } from '../store/index.js';
import type { RequestLogQueue } from './request-log-queue.js';
import type { RequestRecord } from './request-record.js';

/**
 * Turns a finished request into a log row. Estimating usage (tokenizing) happens here, after the
 * response is sent, so the client never waits for it.
 */
export class RequestRecorder {
  private readonly estimating = new Set<Promise<void>>();

  constructor(
    private readonly queue: RequestLogQueue,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {}

  finish(record: RequestRecord, status: number): void {
    const latencyMs = round(performance.now() - record.startedAt);
    if (record.usage === null && record.estimateUsage !== null) {
      const estimate = record.estimateUsage;
      const pending = estimate()
        .then((usage) => this.queue.push(toEntry(record, status, latencyMs, usage.promptTokens, usage.completionTokens)))
        .catch((error: unknown) => {
          this.onError(error);
          this.queue.push(toEntry(record, status, latencyMs, null, null));
        })
        .finally(() => this.estimating.delete(pending));
      this.estimating.add(pending);
      return;
    }
    this.queue.push(toEntry(record, status, latencyMs, record.usage?.promptTokens ?? null, record.usage?.completionTokens ?? null));
  }

  /** Waits for estimates under way, then writes every queued row. */
  async close(): Promise<void> {
    await Promise.all(this.estimating);
    await this.queue.close();
  }
}

function toEntry(record: RequestRecord, status: number, latencyMs: number, promptTokens: number | null, completionTokens: number | null): RequestLogEntry {
  return {
    id: record.id,
    createdAt: record.createdAt,
    tokenId: record.tokenId,
    team: record.team,
    project: record.project,
    endpoint: record.endpoint,
    model: record.model,
    upstream: record.upstream,
    sessionId: record.sessionId,
    status,
    latencyMs,
    ttfbMs: record.firstByteAt === null ? null : round(record.firstByteAt - record.startedAt),
    promptTokens,
    completionTokens,
    usageSource: promptTokens === null && completionTokens === null ? 'none' : record.usageSource,
    errorCode: record.errorCode,
  };
}

function round(milliseconds: number): number {
  return Math.round(milliseconds * 1000) / 1000;
}
