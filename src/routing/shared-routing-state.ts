import type { CredentialHealth, CredentialStatus, CredentialTransition } from './credential-health.js';
import type { InFlight } from './in-flight.js';

/** The shared-state operations this needs (`SharedState` has them); routing imports no backend. */
export interface RoutingStateStore {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ttlMs: number): Promise<void>;
  setField(key: string, field: string, value: string, ttlMs: number): Promise<void>;
  readFields(key: string): Promise<Record<string, string>>;
  publish(channel: string, message: string): Promise<void>;
  subscribe(channel: string, listener: (message: string) => void): Promise<() => Promise<void>>;
  onAvailability(listener: (available: boolean) => void): () => void;
}

export interface SharedRoutingStateOptions {
  /** This gateway process, unique among those sharing the state. */
  replicaId: string;
  /**
   * Every credential, live (accounts added at run time join it): their states are read at start
   * and after an outage, and messages about others are ignored.
   */
  credentialIds: Pick<ReadonlySet<string>, 'has'> & Iterable<string>;
  /** How often this process publishes its in-flight counts and reads the others'. */
  publishIntervalMs?: number;
  /** Told once when the shared state fails, and once when it answers again. */
  onOutage?: (error: unknown) => void;
  onRecovery?: () => void;
  /** Told of a state that could not be read or written, outside an outage (a bug or a corrupt value). */
  onError?: (error: unknown) => void;
}

const CHANNEL = 'credentials';
const IN_FLIGHT_KEY = 'in-flight';
/** A state nobody changed for this long is forgotten (a disable included: see docs/routing.md). */
const STATE_TTL_MS = 30 * 24 * 3_600_000;
/** A process's published counts outlive it by this much at most. */
const IN_FLIGHT_TTL_FACTOR = 5;

interface StateMessage {
  replica: string;
  credential: string;
  status: CredentialStatus;
}

/**
 * Makes every gateway process behind one shared state see the same credential states and each
 * other's in-flight counts, without a round trip on the request path:
 * - each process keeps the states in memory (`CredentialHealth`) and routes from there;
 * - a transition decided here is written to the state (`credential:{id}`) and published on the
 *   `credentials` channel, and every other process adopts it as it arrives;
 * - every `publishIntervalMs` each process writes its in-flight counts as its own field of
 *   `in-flight`, with a time to live of a few intervals (a process that dies stops counting when
 *   its field expires), and reads the others'.
 *
 * When the state fails, requests go on with what this process knows; writes that failed are
 * caught up when it answers again: for each credential the newer of the two states wins.
 */
export class SharedRoutingState {
  private readonly publishIntervalMs: number;
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => Promise<void>) | null = null;
  private stopAvailability: (() => void) | null = null;
  private failing = false;
  private publishing: Promise<void> | null = null;

  constructor(
    private readonly store: RoutingStateStore,
    private readonly health: CredentialHealth,
    private readonly inFlight: InFlight,
    private readonly options: SharedRoutingStateOptions,
  ) {
    this.publishIntervalMs = options.publishIntervalMs ?? 1_000;
  }

  /** Reads the states other processes left, listens for their changes, and starts publishing counts. */
  async start(): Promise<void> {
    this.unsubscribe = await this.store.subscribe(CHANNEL, (message) => this.receive(message));
    this.stopAvailability = this.store.onAvailability((available) => {
      if (available) void this.recover();
      else this.noteFailure(new Error('the shared state is unreachable'));
    });
    await this.catchUp();
    this.timer = setInterval(() => void this.exchangeCounts(), this.publishIntervalMs);
    this.timer.unref();
  }

  /** The credential state machine's transition hook: shares what this process decided. */
  shareTransition(transition: CredentialTransition): void {
    const status = this.health.status(transition.credentialId);
    void this.write(transition.credentialId, status);
  }

  /** A failed state operation: the first of an outage is told, the rest are the same news. */
  noteFailure(error: unknown): void {
    if (this.failing) return;
    this.failing = true;
    this.options.onOutage?.(error);
  }

  /** Publishes and reads the in-flight counts now (the timer does it every interval). */
  exchangeCounts(): Promise<void> {
    this.publishing ??= this.publishAndRead().finally(() => {
      this.publishing = null;
    });
    return this.publishing;
  }

  async close(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.stopAvailability?.();
    await this.publishing;
    await this.unsubscribe?.().catch(() => undefined);
  }

  private async publishAndRead(): Promise<void> {
    const { replicaId } = this.options;
    try {
      const counts = Object.fromEntries(this.inFlight.localCounts());
      await this.store.setField(IN_FLIGHT_KEY, replicaId, JSON.stringify(counts), this.publishIntervalMs * IN_FLIGHT_TTL_FACTOR);
      const fields = await this.store.readFields(IN_FLIGHT_KEY);
      const others = new Map<string, number>();
      for (const [replica, value] of Object.entries(fields)) {
        if (replica === replicaId) continue;
        for (const [credential, count] of Object.entries(parseCounts(value))) others.set(credential, (others.get(credential) ?? 0) + count);
      }
      this.inFlight.setRemote(others);
    } catch (error) {
      this.noteFailure(error);
    }
  }

  private async write(credentialId: string, status: CredentialStatus): Promise<void> {
    const serialised = JSON.stringify(status);
    try {
      await this.store.set(stateKey(credentialId), serialised, STATE_TTL_MS);
      await this.store.publish(CHANNEL, JSON.stringify({ replica: this.options.replicaId, credential: credentialId, status } satisfies StateMessage));
    } catch (error) {
      // Caught up by `recover` when the state answers again.
      this.noteFailure(error);
    }
  }

  private receive(message: string): void {
    let parsed: StateMessage;
    try {
      parsed = JSON.parse(message) as StateMessage;
    } catch (error) {
      this.options.onError?.(error);
      return;
    }
    if (parsed.replica === this.options.replicaId || !this.options.credentialIds.has(parsed.credential)) return;
    // Messages from two processes may cross: the later decision stands.
    if (parsed.status.since < this.health.status(parsed.credential).since) return;
    this.health.adopt(parsed.credential, parsed.status);
  }

  private async recover(): Promise<void> {
    try {
      await this.catchUp();
      await this.exchangeCounts();
    } catch (error) {
      this.options.onError?.(error);
      return;
    }
    if (!this.failing) return;
    this.failing = false;
    this.options.onRecovery?.();
  }

  /** For each credential, the newer of this process's state and the shared one wins, on both sides. */
  private async catchUp(): Promise<void> {
    for (const credentialId of this.options.credentialIds) {
      const stored = await this.store.get(stateKey(credentialId));
      const local = this.health.status(credentialId);
      const shared = stored === null ? null : parseStatus(stored);
      if (shared !== null && shared.since >= local.since) {
        this.health.adopt(credentialId, shared);
      } else if (local.since > 0) {
        await this.write(credentialId, local);
      }
    }
  }
}

function stateKey(credentialId: string): string {
  return `credential:${credentialId}`;
}

function parseStatus(text: string): CredentialStatus | null {
  try {
    const value = JSON.parse(text) as Partial<CredentialStatus>;
    return typeof value.state === 'string' && typeof value.since === 'number' ? (value as CredentialStatus) : null;
  } catch {
    return null;
  }
}

function parseCounts(text: string): Record<string, number> {
  try {
    const value = JSON.parse(text) as unknown;
    if (value === null || typeof value !== 'object') return {};
    return Object.fromEntries(Object.entries(value).filter((entry): entry is [string, number] => typeof entry[1] === 'number' && entry[1] > 0));
  } catch {
    return {};
  }
}
