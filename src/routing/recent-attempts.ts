/** How far back the console's "recent error rate" looks, in buckets of one minute. */
const BUCKET_MS = 60_000;
const BUCKETS = 10;

/** A credential's attempts and failures over the last {@link RECENT_WINDOW_MS}, as counted by this process. */
export interface RecentCount {
  attempts: number;
  failures: number;
  /** The mean time to the upstream's answer (its head, for a stream) of the attempts that did not fail through the credential; null when there were none. */
  meanMs: number | null;
}

export const RECENT_WINDOW_MS = BUCKET_MS * BUCKETS;

interface Ring {
  /** The minute (since the epoch) each slot counts; a slot of another minute is stale. */
  minutes: number[];
  attempts: number[];
  failures: number[];
  /** The summed time of each minute's attempts that did not fail through the credential. */
  succeededMs: number[];
}

/**
 * Attempts per credential and how many failed through the credential's fault, over the last ten
 * minutes in one-minute buckets: what operators read as a credential's recent error rate. Kept in
 * this process (a counter per attempt is not worth a round trip to the shared state); a replica
 * shows its own traffic. Fixed memory per credential: ten slots, reused as minutes pass.
 */
export class RecentAttempts {
  private readonly rings = new Map<string, Ring>();

  constructor(private readonly now: () => number = Date.now) {}

  /** An attempt ended: whether it failed through the credential, and how long it took (counted for the mean when it succeeded). */
  note(credentialId: string, failed: boolean, ms: number): void {
    const minute = Math.floor(this.now() / BUCKET_MS);
    let ring = this.rings.get(credentialId);
    if (ring === undefined) {
      ring = {
        minutes: new Array<number>(BUCKETS).fill(-1),
        attempts: new Array<number>(BUCKETS).fill(0),
        failures: new Array<number>(BUCKETS).fill(0),
        succeededMs: new Array<number>(BUCKETS).fill(0),
      };
      this.rings.set(credentialId, ring);
    }
    const slot = minute % BUCKETS;
    if (ring.minutes[slot] !== minute) {
      ring.minutes[slot] = minute;
      ring.attempts[slot] = 0;
      ring.failures[slot] = 0;
      ring.succeededMs[slot] = 0;
    }
    (ring.attempts[slot] as number)++;
    if (failed) (ring.failures[slot] as number)++;
    else (ring.succeededMs[slot] as number) += ms;
  }

  count(credentialId: string): RecentCount {
    const ring = this.rings.get(credentialId);
    const total: RecentCount = { attempts: 0, failures: 0, meanMs: null };
    if (ring === undefined) return total;
    const minute = Math.floor(this.now() / BUCKET_MS);
    let succeededMs = 0;
    for (let slot = 0; slot < BUCKETS; slot++) {
      if (minute - (ring.minutes[slot] as number) >= BUCKETS) continue;
      total.attempts += ring.attempts[slot] as number;
      total.failures += ring.failures[slot] as number;
      succeededMs += ring.succeededMs[slot] as number;
    }
    // The credential's failures (timeouts above all) would make the mean say how long it took to fail.
    const succeeded = total.attempts - total.failures;
    total.meanMs = succeeded > 0 ? Math.round(succeededMs / succeeded) : null;
    return total;
  }
}
