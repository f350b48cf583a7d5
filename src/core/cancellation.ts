/**
 * Tells an upstream call that its caller has gone. An AbortController would do, but it is an
 * EventTarget, which costs several microseconds per request on the hot path; one call needs one
 * listener at a time.
 */
export class Cancellation {
  private listener: (() => void) | null = null;
  private cancelledFlag = false;

  get cancelled(): boolean {
    return this.cancelledFlag;
  }

  /** Replaces the previous listener (a failed-over call no longer needs cancelling); runs at once if already cancelled. */
  onCancel(listener: () => void): void {
    if (this.cancelledFlag) listener();
    else this.listener = listener;
  }

  clear(): void {
    this.listener = null;
  }

  cancel(): void {
    if (this.cancelledFlag) return;
    this.cancelledFlag = true;
    const listener = this.listener;
    this.listener = null;
    listener?.();
  }
}
