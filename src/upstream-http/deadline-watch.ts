import { SwapList, type Listed } from '../core/index.js';

/** Something in flight that must give up once `deadline` (a `performance.now()` time) has passed; `listSlot` (-1 when not watched) only the watch writes. */
export interface WatchedCall extends Listed {
  deadline: number;
  /** Called once, from a sweep, after the deadline has passed; the call is then no longer watched. */
  expire(): void;
}

/**
 * Upstream timeouts without a timer per request. undici's own header and body timeouts make a
 * "fast timer" per request that it only drops on its next 500-ms tick, by which time the young
 * generation has been swept twice and the timer promoted: at 3,000 requests a second that was most
 * of what the old generation grew by (measured 0.42 → 0.16 MB/s without them), so most of the
 * major GCs that stall the event loop. Here a call carries its deadline as a number in a set, and
 * one native timer per watch sweeps the set while anything is in it: a timeout fires between its
 * deadline and one resolution later.
 */
export class DeadlineWatch {
  // Not a Set (core/swap-list.ts): at ~1,500 calls a second a Set's add/delete promoted ~15 KB
  // more per scavenge (measured with --trace-gc-nvp), about what the fast timers had.
  private readonly calls = new SwapList<WatchedCall>();
  private timer: NodeJS.Timeout | null = null;
  private armed = false;

  constructor(readonly resolutionMs: number) {}

  /** Starts watching `call`, or moves its deadline: `timeoutMs` from now. */
  watch(call: WatchedCall, timeoutMs: number): void {
    call.deadline = performance.now() + timeoutMs;
    this.calls.add(call);
    if (!this.armed) this.arm();
  }

  unwatch(call: WatchedCall): void {
    this.calls.remove(call);
  }

  /** Calls being watched, for tests and diagnostics. */
  get size(): number {
    return this.calls.size;
  }

  private arm(): void {
    this.armed = true;
    if (this.timer === null) {
      this.timer = setTimeout(this.sweep, this.resolutionMs);
      // A pending call's own socket keeps the process alive; this timer need not.
      this.timer.unref();
    } else {
      // One timer for the life of the watch: refresh() re-arms it once it has fired.
      this.timer.refresh();
    }
  }

  private readonly sweep = (): void => {
    const now = performance.now();
    // Backwards, so that a swap-remove only ever moves an already-checked call into this slot.
    for (let slot = this.calls.size - 1; slot >= 0; slot--) {
      // An expiry can end other calls too (the slot may be gone), and always ends its own first.
      const call = this.calls.at(slot);
      if (call === undefined || call.deadline > now) continue;
      this.unwatch(call);
      call.expire();
    }
    if (this.calls.size > 0) this.timer?.refresh();
    else this.armed = false;
  };
}

/** A tenth of the shortest timeout, within 5 ms – 1 s: timeouts fire at most ~10 % late. */
export function deadlineResolution(...timeoutsMs: number[]): number {
  return Math.min(1_000, Math.max(5, Math.floor(Math.min(...timeoutsMs) / 10)));
}
