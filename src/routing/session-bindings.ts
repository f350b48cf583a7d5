import type { SessionSource } from './session-id.js';

/** The shared-state operations bindings need (`SharedState` has them). */
export interface BindingStore {
  getAndTouch(key: string, ttlMs: number): Promise<string | null>;
  setIfAbsent(key: string, value: string, ttlMs: number, cap?: { index: string; limit: number }): Promise<string>;
  compareAndSet(key: string, expected: string | null, value: string, ttlMs: number): Promise<boolean>;
}

/**
 * A binding this process read from the state is trusted for this long: a session's requests then
 * cost the state one read a second per process, not one each (with Redis, a round trip was about
 * a third of a plain request's CPU). A binding another process moved meanwhile is seen this late.
 */
export const BINDING_FRESH_MS = 1_000;
/** The most bindings a process trusts at once (the most recently read; older ones are read again). */
export const MAX_FRESH_BINDINGS = 10_000;

/** `routing.max_sessions_per_team`'s default. */
export const DEFAULT_MAX_SESSIONS_PER_TEAM = 10_000;

/** A request's session, as the router needs it: whose, for which model, which id, and where the id came from. */
export interface RoutingSession {
  readonly team: string;
  readonly model: string;
  readonly id: string;
  readonly source: SessionSource;
}

/**
 * Which credential each session is bound to: (team, model, session id) → credential id, with a
 * sliding time to live (`routing.session_ttl`) renewed by every request of the session. Kept in the
 * shared state, so every gateway process behind it keeps a session on one credential.
 *
 * A team holds at most `maxSessionsPerTeam` bindings (`routing.max_sessions_per_team`): a caller
 * that names a new session id on every request would otherwise grow the shared state without
 * bound. Past it, the team's earliest bound sessions lose their binding, in the same atomic step
 * as the new binding's write; such a session, when it comes back, is bound again (most often to
 * the same credential: its rendezvous choice is the same).
 *
 * The shared state may fail (Redis lost): a lookup then answers "no binding" and a write is
 * dropped, so the router falls back to the session's rendezvous choice, which every process makes
 * alike. `onError` is told; it never reaches the request.
 *
 * A binding read is trusted for BINDING_FRESH_MS (at most MAX_FRESH_BINDINGS of them): the
 * session's requests in that time neither read it nor renew its time to live, which a read a
 * second does well enough for a time to live of minutes. This process's own moves are seen at
 * once; another's within BINDING_FRESH_MS.
 */
export class SessionBindings {
  private readonly fresh = new Map<string, { readonly credentialId: string; readonly readAt: number }>();

  constructor(
    private readonly store: BindingStore,
    private readonly ttlMs: number,
    private readonly onError: (error: unknown) => void,
    private readonly maxSessionsPerTeam: number = DEFAULT_MAX_SESSIONS_PER_TEAM,
    private readonly now: () => number = Date.now,
  ) {}

  /** The shared-state key: length-prefixed parts, so no team, model or id can be mistaken for another. */
  static key(session: RoutingSession): string {
    return `session:${session.team.length}:${session.team}${session.model.length}:${session.model}${session.id}`;
  }

  /** The bound credential, renewing the binding's time to live; null when unbound (or the state failed). */
  lookup(key: string): Promise<string | null> {
    const now = this.now();
    const known = this.fresh.get(key);
    if (known !== undefined && now - known.readAt < BINDING_FRESH_MS) return Promise.resolve(known.credentialId);
    return this.store.getAndTouch(key, this.ttlMs).then(
      (credentialId) => {
        // An unbound session is not remembered: the request binds it, and the next one reads that.
        if (credentialId === null) this.fresh.delete(key);
        else this.remember(key, credentialId, now);
        return credentialId;
      },
      (error: unknown) => {
        this.onError(error);
        return null;
      },
    );
  }

  /** Binds a new session of `team`; when another request bound it first, that binding stands. */
  async bind(key: string, credentialId: string, team: string): Promise<void> {
    // Read again next time: another request may have bound it first, or the team's cap unbound it.
    this.fresh.delete(key);
    try {
      await this.store.setIfAbsent(key, credentialId, this.ttlMs, { index: `sessions:${team.length}:${team}`, limit: this.maxSessionsPerTeam });
    } catch (error) {
      this.onError(error);
    }
  }

  /** Moves a session off `from`; when another request moved it first, its move stands. */
  async move(key: string, from: string, to: string): Promise<void> {
    this.fresh.delete(key);
    try {
      if (await this.store.compareAndSet(key, from, to, this.ttlMs)) this.remember(key, to, this.now());
    } catch (error) {
      this.onError(error);
    }
  }

  private remember(key: string, credentialId: string, readAt: number): void {
    // Map order is insertion order: deleting first makes this the newest, and the first the oldest.
    this.fresh.delete(key);
    if (this.fresh.size >= MAX_FRESH_BINDINGS) this.fresh.delete(this.fresh.keys().next().value as string);
    this.fresh.set(key, { credentialId, readAt });
  }
}
