import { GatewayError } from '../../errors/index.js';
import type { Attempt } from '../provider-adapter.js';
import type { DeadlineWatch, WatchedCall } from '../../upstream-http/deadline-watch.js';

/** What a call needs to time itself out: the pool's watch and the upstream's two limits. */
export interface CallTimeouts {
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
export abstract class TimedCall implements WatchedCall {
  deadline = 0;
  listSlot = -1;
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
