import type { Usage } from '../core/index.js';
import { ERROR_CODES, type ErrorCode } from '../errors/index.js';
import type { RequestLogEntry } from '../store/index.js';
import { costOf, type ModelPrice } from './model-prices.js';
import type { RequestLogQueue } from './request-log-queue.js';
import type { RequestRecord } from './request-record.js';

/** Status recorded for a request whose client went away before the response was complete (nginx's convention). */
const CLIENT_CLOSED_REQUEST = 499;
const SERVICE_UNAVAILABLE = 503;

/**
 * Turns a finished request into a log row. Estimating usage (tokenizing) happens here, after the
 * response is sent, so the client never waits for it.
 */
export class RequestRecorder {
  /** Requests begun and not yet queued (including those whose usage is being estimated). */
  private open = 0;
  private settled: (() => void) | null = null;
  /** Set when shutdown gave up waiting: responses cut after this were cut by us, not by their clients. */
  private deadlinePassed = false;

  constructor(
    private readonly queue: RequestLogQueue,
    private readonly onError: (error: unknown) => void = () => undefined,
    /** Told of every row as it is queued, with its record: the access log. */
    private readonly onFinished: (entry: RequestLogEntry, record: RequestRecord) => void = () => undefined,
    /** A model's configured price, for the row's cost (dollar quotas, the usage API). */
    private readonly priceOf: (model: string) => ModelPrice | undefined = () => undefined,
    /** This process's number under `serve --workers`; null when it runs alone. */
    private readonly worker: number | null = null,
  ) {}

  markShutdownDeadline(): void {
    this.deadlinePassed = true;
  }

  /**
   * A response that closed before it was complete: the client left, shutdown cut it, or the
   * gateway cut it for an error it noted first (an upstream silent past its idle timeout, on a
   * stream that can only be cut): that error's status, not the client's 499.
   */
  finishIncomplete(record: RequestRecord): void {
    if (this.deadlinePassed) {
      record.errorCode = 'shutdown_deadline';
      this.finish(record, SERVICE_UNAVAILABLE);
      return;
    }
    const code = record.errorCode;
    record.errorCode ??= 'client_closed_request';
    this.finish(record, code !== null && Object.hasOwn(ERROR_CODES, code) ? ERROR_CODES[code as ErrorCode].status : CLIENT_CLOSED_REQUEST);
  }

  /** Called when a request starts, so that shutdown waits for its row. */
  begin(): void {
    this.open++;
  }

  /**
   * Queues the request's row. Runs from a response's `close` listener, outside any request's
   * promise chain, so nothing in it may throw: an estimate that fails (synchronously or not) is
   * logged and the row is written without usage.
   */
  finish(record: RequestRecord, status: number): void {
    record.releaseHeld();
    const latencyMs = round(performance.now() - record.startedAt);
    if (record.usage === null && record.estimateUsage !== null) {
      let estimate: Promise<Usage>;
      try {
        estimate = record.estimateUsage();
      } catch (error) {
        estimate = Promise.reject(error);
      }
      estimate
        .then((usage) => this.write(record, status, latencyMs, usage))
        .catch((error: unknown) => {
          this.onError(error);
          this.write(record, status, latencyMs, null);
        })
        .finally(() => this.settle());
      return;
    }
    this.write(record, status, latencyMs, record.usage);
    this.settle();
  }

  /** The row's usage is final: its cost is priced, the caller's limits settled with it, and the row queued. */
  private write(record: RequestRecord, status: number, latencyMs: number, usage: Usage | null): void {
    record.costUsd = usage === null || record.model === null ? null : costOf(this.priceOf(record.model), usage);
    record.usageFinal = true;
    const onUsage = record.onUsage;
    if (onUsage !== null) {
      record.onUsage = null;
      try {
        onUsage(usage);
      } catch (error) {
        this.onError(error);
      }
    }
    const entry = toEntry(record, status, latencyMs, usage, this.worker);
    this.queue.push(entry);
    this.onFinished(entry, record);
  }

  /**
   * Waits until every request begun has its row queued (responses cut at the deadline close a
   * moment after the server does, and estimates take a while), then writes the queue.
   */
  async close(waitMs = 5_000): Promise<void> {
    if (this.open > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        new Promise<void>((resolve) => {
          this.settled = resolve;
        }),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, waitMs);
        }),
      ]);
      clearTimeout(timer);
    }
    await this.queue.close();
  }

  private settle(): void {
    this.open--;
    if (this.open === 0) this.settled?.();
  }
}

function toEntry(record: RequestRecord, status: number, latencyMs: number, usage: Usage | null, worker: number | null): RequestLogEntry {
  const promptTokens = usage?.promptTokens ?? null;
  const completionTokens = usage?.completionTokens ?? null;
  return {
    id: record.id,
    clientRequestId: record.clientRequestId,
    createdAt: record.createdAt,
    tokenId: record.tokenId,
    team: record.team,
    project: record.project,
    endpoint: record.endpoint,
    model: record.model,
    upstream: record.upstream,
    upstreamModel: record.upstreamModel,
    sessionId: record.sessionId,
    status,
    latencyMs,
    ttfbMs: record.firstByteAt === null ? null : round(record.firstByteAt - record.startedAt),
    promptTokens,
    completionTokens,
    cachedTokens: usage?.cachedTokens ?? null,
    cacheWriteTokens: usage?.cacheWriteTokens ?? null,
    reasoningTokens: usage?.reasoningTokens ?? null,
    costUsd: record.costUsd,
    usageSource: promptTokens === null && completionTokens === null ? 'none' : record.usageSource,
    errorCode: record.errorCode,
    sessionSource: record.sessionSource,
    affinity: record.affinity,
    attempts: record.attempts,
    clientAddress: record.clientAddress === '' ? null : record.clientAddress,
    worker,
  };
}

function round(milliseconds: number): number {
  return Math.round(milliseconds * 1000) / 1000;
}
