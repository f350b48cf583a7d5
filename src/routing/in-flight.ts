/**
 * Requests in flight per credential: this process's own, counted exactly, plus the other gateway
 * processes' as last published through the shared state (see shared-routing-state.ts). It decides
 * `least-busy` and `max_in_flight`; a request that finds every credential full waits here for a
 * slot to free up.
 */
export class InFlight {
  private readonly local = new Map<string, number>();
  private remote: ReadonlyMap<string, number> = new Map();
  private readonly waiters = new Set<() => void>();

  /** This process's count and the others' together. */
  count(credentialId: string): number {
    return (this.local.get(credentialId) ?? 0) + (this.remote.get(credentialId) ?? 0);
  }

  /** This process's own counts, for publishing to the others. */
  localCounts(): ReadonlyMap<string, number> {
    return this.local;
  }

  hasRoom(credentialId: string, maxInFlight: number | null): boolean {
    return maxInFlight === null || this.count(credentialId) < maxInFlight;
  }

  /** Counts one request on the credential; the function returned ends it (calling it again does nothing). */
  acquire(credentialId: string): () => void {
    this.local.set(credentialId, (this.local.get(credentialId) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.local.get(credentialId) ?? 1) - 1;
      if (left === 0) this.local.delete(credentialId);
      else this.local.set(credentialId, left);
      this.wake();
    };
  }

  /** The other processes' counts, summed per credential. */
  setRemote(counts: ReadonlyMap<string, number>): void {
    this.remote = counts;
    this.wake();
  }

  /**
   * Resolves true at the next change that may have freed a slot (a release here, news from the
   * others), false when `timeoutMs` passes first or the signal aborts. The caller checks again.
   */
  waitForChange(timeoutMs: number, signal: AbortSignal): Promise<boolean> {
    if (timeoutMs <= 0 || signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (changed: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(onChange);
        signal.removeEventListener('abort', onAbort);
        resolve(changed);
      };
      const onChange = () => done(true);
      const onAbort = () => done(false);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.waiters.add(onChange);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  private wake(): void {
    if (this.waiters.size === 0) return;
    for (const waiter of [...this.waiters]) waiter();
  }
}
