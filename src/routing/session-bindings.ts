import type { SessionSource } from './session-id.js';

/** The shared-state operations bindings need (`SharedState` has them). */
export interface BindingStore {
  getAndTouch(key: string, ttlMs: number): Promise<string | null>;
  setIfAbsent(key: string, value: string, ttlMs: number, cap?: { index: string; limit: number }): Promise<string>;
  compareAndSet(key: string, expected: string | null, value: string, ttlMs: number): Promise<boolean>;
}

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
 */
export class SessionBindings {
  constructor(
    private readonly store: BindingStore,
    private readonly ttlMs: number,
    private readonly onError: (error: unknown) => void,
    private readonly maxSessionsPerTeam: number = DEFAULT_MAX_SESSIONS_PER_TEAM,
  ) {}

  /** The shared-state key: length-prefixed parts, so no team, model or id can be mistaken for another. */
  static key(session: RoutingSession): string {
    return `session:${session.team.length}:${session.team}${session.model.length}:${session.model}${session.id}`;
  }

  /** The bound credential, renewing the binding's time to live; null when unbound (or the state failed). */
  lookup(key: string): Promise<string | null> {
    return this.store.getAndTouch(key, this.ttlMs).catch((error: unknown) => {
      this.onError(error);
      return null;
    });
  }

  /** Binds a new session of `team`; when another request bound it first, that binding stands. */
  async bind(key: string, credentialId: string, team: string): Promise<void> {
    try {
      await this.store.setIfAbsent(key, credentialId, this.ttlMs, { index: `sessions:${team.length}:${team}`, limit: this.maxSessionsPerTeam });
    } catch (error) {
      this.onError(error);
    }
  }

  /** Moves a session off `from`; when another request moved it first, its move stands. */
  async move(key: string, from: string, to: string): Promise<void> {
    try {
      await this.store.compareAndSet(key, from, to, this.ttlMs);
    } catch (error) {
      this.onError(error);
    }
  }
}
