import type { FailureClass, UpstreamFailure } from '../errors/index.js';
import { maskSecrets } from '../core/index.js';
import { rateLimitResetMs } from './rate-limit-reset.js';

/**
 * - `healthy`: used.
 * - `cooling` until `until`: rate limited (the upstream's own delay) or failing (connection
 *   failures; 5xx, timeouts and broken answers in a row from more than one caller: exponential
 *   backoff). When the time has come, one request probes it.
 * - `failed`: the upstream refused the credential itself (401/403); until an operator resets it.
 * - `disabled`: by an operator.
 */
export const CREDENTIAL_STATES = ['healthy', 'cooling', 'failed', 'disabled'] as const;
export type CredentialState = (typeof CREDENTIAL_STATES)[number];

export interface CredentialStatus {
  readonly state: CredentialState;
  /** When a cooldown ends (ms since the epoch); null in the other states. */
  readonly until: number | null;
  /** Why it is in this state, in an operator's words; null when healthy. */
  readonly reason: string | null;
  /** When it entered this state. */
  readonly since: number;
  /** Cooldowns in a row without a success: the next backoff step. */
  readonly cooldownsInARow: number;
  /** The class of the failure that put it in `cooling` or `failed`: a pool cooling for 429s answers 429, not 503. */
  readonly cause: FailureClass | null;
  readonly lastError: string | null;
}

export interface CredentialTransition {
  readonly credentialId: string;
  readonly from: CredentialState;
  readonly to: CredentialState;
  readonly reason: string | null;
  readonly until: number | null;
  readonly at: number;
}

export interface CredentialHealthOptions {
  now?: () => number;
  /** The longest cooldown (`routing.max_cooldown`); 5 minutes by default. */
  maxCooldownMs?: number;
  /** Told of every change of state, for the log. */
  onTransition?: (transition: CredentialTransition) => void;
}

/** The first backoff step; each further cooldown in a row doubles it. */
const FIRST_BACKOFF_MS = 1_000;

/**
 * Failures a request's own content can cause (a 5xx, an overloaded answer, a timeout, a broken
 * answer): they cool a credential only as a streak, failures with no success between, of at least
 * STREAK_FAILURES requests from at least two callers (teams). One caller whose inputs make a
 * server fail never cools it for the others, however often it sends them. See docs/routing.md.
 */
const REQUEST_CAUSABLE: ReadonlySet<FailureClass> = new Set(['server', 'overloaded', 'protocol', 'timeout']);
const STREAK_FAILURES = 3;
/** A streak whose last failure is older than this starts over: failures that far apart say nothing together. */
const STREAK_QUIET_MS = 60_000;
/** What a pool's ejection cap may put back in use (routing/ejection-cap.ts): cooldowns for failures of the server, not of the key. */
const SERVER_CAUSES: ReadonlySet<FailureClass> = new Set(['server', 'overloaded', 'protocol', 'timeout', 'connect']);

/** The current streak of request-causable failures of one credential. */
interface FailureStreak {
  failures: number;
  firstCaller: string | null;
  /** Whether a caller other than the first failed in it too. */
  corroborated: boolean;
  lastAt: number;
}

const HEALTHY: CredentialStatus = { state: 'healthy', until: null, reason: null, since: 0, cooldownsInARow: 0, cause: null, lastError: null };

/**
 * The state of every credential, as this process has seen it (the shared backend comes with the
 * router's use of it). What a failure does to a credential is decided here, once, from the
 * classified outcome: the router only reports outcomes and asks which credentials it may use.
 */
export class CredentialHealth {
  private readonly statuses = new Map<string, CredentialStatus>();
  /** Credentials whose cooldown ended and whose probe is in flight: nobody else uses them meanwhile. */
  private readonly probing = new Set<string>();
  /** Streaks of request-causable failures, this process's own (a success anywhere ends them). */
  private readonly streaks = new Map<string, FailureStreak>();
  private readonly now: () => number;
  private readonly maxCooldownMs: number;
  private readonly onTransition: (transition: CredentialTransition) => void;

  constructor(options: CredentialHealthOptions = {}) {
    this.now = options.now ?? Date.now;
    this.maxCooldownMs = options.maxCooldownMs ?? 5 * 60_000;
    this.onTransition = options.onTransition ?? (() => undefined);
  }

  status(credentialId: string): CredentialStatus {
    return this.statuses.get(credentialId) ?? HEALTHY;
  }

  /**
   * The status as it is now, for operators: a cooldown whose time has come is no longer cooling,
   * though no request has touched the credential since (its backoff step is kept until a success).
   */
  current(credentialId: string): CredentialStatus {
    const status = this.status(credentialId);
    if (status.state !== 'cooling' || (status.until as number) > this.now()) return status;
    if (this.probing.has(credentialId)) return { ...status, until: null, reason: 'cooldown ended; a probe request is under way' };
    return { ...status, state: 'healthy', until: null, reason: 'cooldown ended; the next request probes it', since: status.until as number, cause: null };
  }

  /**
   * When the credential's cooldown for a failure of the server (not of its key: 5xx, timeouts,
   * broken answers, connections) ends, while it keeps the credential out of use; null otherwise.
   * A pool's ejection cap may use such a credential anyway.
   */
  heldForServerFailure(credentialId: string): number | null {
    const status = this.statuses.get(credentialId);
    if (status === undefined || status.state !== 'cooling' || status.cause === null || !SERVER_CAUSES.has(status.cause)) return null;
    return (status.until as number) > this.now() || this.probing.has(credentialId) ? (status.until as number) : null;
  }

  /** Whether `take` would let a request use it now, without taking it. */
  usable(credentialId: string): boolean {
    const status = this.statuses.get(credentialId);
    if (status === undefined || status.state === 'healthy') return true;
    return status.state === 'cooling' && (status.until as number) <= this.now() && !this.probing.has(credentialId);
  }

  /**
   * Whether a request may use the credential now, taking it: true when healthy, or when its
   * cooldown has ended and no probe is in flight (this request is then the probe, and the
   * credential stays out of use for others until `succeeded`, `failed` or `released`).
   */
  take(credentialId: string): boolean {
    const status = this.statuses.get(credentialId);
    if (status === undefined || status.state === 'healthy') return true;
    if (status.state !== 'cooling' || (status.until as number) > this.now() || this.probing.has(credentialId)) return false;
    this.probing.add(credentialId);
    return true;
  }

  /** The credential answered: a cooling one is healthy again and its backoff starts over. */
  succeeded(credentialId: string): void {
    this.probing.delete(credentialId);
    if (this.streaks.size !== 0) this.streaks.delete(credentialId);
    const status = this.statuses.get(credentialId);
    if (status === undefined || status.state === 'healthy') return;
    if (status.state === 'cooling') this.change(credentialId, status, { ...HEALTHY, since: this.now() }, 'answered');
  }

  /** A taken credential was not used after all, or its attempt failed for a reason not its own. */
  released(credentialId: string): void {
    this.probing.delete(credentialId);
  }

  /**
   * What a classified failure does to the credential; the caller's own mistakes do nothing.
   * `caller` (the request's team) tells one caller's failures from a server failing for all.
   */
  failed(credentialId: string, failure: UpstreamFailure, caller: string | null = null): void {
    this.probing.delete(credentialId);
    const status = this.status(credentialId);
    if (failure.class === 'caller' || status.state === 'disabled' || status.state === 'failed') return;
    const now = this.now();
    const stillCooling = status.state === 'cooling' && (status.until as number) > now;
    const lastError = `${failure.class}${failure.status === null ? '' : ` ${failure.status}`}: ${maskSecrets(failure.message).slice(0, 200)}`;
    let streak: FailureStreak | null = null;
    if (REQUEST_CAUSABLE.has(failure.class)) {
      // Requests that were under way when the cooldown began say nothing new.
      if (stillCooling) return;
      streak = this.extendStreak(credentialId, caller, now);
      if (streak.failures < STREAK_FAILURES || !streak.corroborated) {
        // Not evidence enough to cool it, but operators still see what failed last (in this process).
        this.statuses.set(credentialId, { ...status, lastError });
        return;
      }
    }
    this.streaks.delete(credentialId);
    if (failure.class === 'auth') {
      const reason = `the upstream refused the credential (${failure.status ?? 'auth'})`;
      this.change(
        credentialId,
        status,
        { state: 'failed', until: null, reason, since: now, cooldownsInARow: status.cooldownsInARow, cause: 'auth', lastError },
        reason,
      );
      return;
    }
    // A request that was already under way when the cooldown began failing too is not a new step:
    // a burst of ten concurrent connection failures is one failure of the credential, not ten doublings.
    const step = stillCooling ? status.cooldownsInARow : status.cooldownsInARow + 1;
    const backoff = Math.min(FIRST_BACKOFF_MS * 2 ** Math.min(step - 1, 30), this.maxCooldownMs);
    const told = failure.class === 'rate_limit' ? upstreamDelayMs(failure, now) : null;
    // A spent quota whose reset time the upstream gave (a subscription's usage limit) is out until
    // then, however far: any request before it would only be refused again. Without one, it is
    // tried again after the longest cooldown.
    const quotaReset = failure.class === 'quota' && failure.retryAfterSeconds !== null ? Math.min(failure.retryAfterSeconds * 1_000, MAX_QUOTA_RESET_MS) : null;
    const delay = failure.class === 'quota' ? (quotaReset ?? this.maxCooldownMs) : Math.min(told ?? backoff, this.maxCooldownMs);
    if (stillCooling && now + delay <= (status.until as number)) return;
    const reason =
      failure.class === 'rate_limit'
        ? `rate limited${told === null ? '' : ' (the upstream said until when)'}`
        : failure.class === 'quota'
          ? quotaReset === null
            ? 'quota or balance spent'
            : 'usage limit reached (the upstream said until when)'
          : `${failure.class} failure${failure.status === null ? '' : ` (${failure.status})`}${streak === null ? '' : ` from ${streak.failures} requests in a row, of more than one caller`}, backoff step ${step}`;
    this.change(
      credentialId,
      status,
      { state: 'cooling', until: now + delay, reason, since: now, cooldownsInARow: step, cause: failure.class, lastError },
      reason,
    );
  }

  private extendStreak(credentialId: string, caller: string | null, now: number): FailureStreak {
    const streak = this.streaks.get(credentialId);
    if (streak === undefined || now - streak.lastAt > STREAK_QUIET_MS) {
      const started: FailureStreak = { failures: 1, firstCaller: caller, corroborated: false, lastAt: now };
      this.streaks.set(credentialId, started);
      return started;
    }
    streak.failures++;
    streak.lastAt = now;
    if (caller !== streak.firstCaller) streak.corroborated = true;
    return streak;
  }

  /** By an operator: out of use until enabled. */
  disable(credentialId: string, reason = 'disabled by an operator'): void {
    const status = this.status(credentialId);
    if (status.state === 'disabled') return;
    this.change(
      credentialId,
      status,
      { state: 'disabled', until: null, reason, since: this.now(), cooldownsInARow: 0, cause: null, lastError: status.lastError },
      reason,
    );
  }

  /** By an operator: a disabled credential back in use (any other state is left as it is). */
  enable(credentialId: string, reason = 'enabled by an operator'): void {
    const status = this.status(credentialId);
    if (status.state !== 'disabled') return;
    this.change(credentialId, status, { ...HEALTHY, since: this.now(), lastError: status.lastError }, reason);
  }

  /** By an operator: ends a cooldown or a failure, and the backoff starts over. A disabled credential stays disabled. */
  reset(credentialId: string, reason = 'reset by an operator'): void {
    this.probing.delete(credentialId);
    const status = this.status(credentialId);
    if (status.state === 'disabled' || (status.state === 'healthy' && status.cooldownsInARow === 0)) return;
    this.change(credentialId, status, { ...HEALTHY, since: this.now(), lastError: status.lastError }, reason);
  }

  /**
   * A state another gateway process decided (through the shared state): taken as it is, without
   * telling `onTransition` (the process that decided it logged it).
   */
  adopt(credentialId: string, status: CredentialStatus): void {
    if (status.state === 'healthy' && status.cooldownsInARow === 0 && status.lastError === null) this.statuses.delete(credentialId);
    else this.statuses.set(credentialId, status);
    if (status.state !== 'cooling') this.probing.delete(credentialId);
    this.streaks.delete(credentialId);
  }

  private change(credentialId: string, from: CredentialStatus, to: CredentialStatus, reason: string): void {
    this.streaks.delete(credentialId);
    this.statuses.set(credentialId, to);
    if (from.state !== to.state || from.until !== to.until) {
      this.onTransition({ credentialId, from: from.state, to: to.state, reason, until: to.until, at: to.since });
    }
  }
}

/** How long a rate-limited upstream asked to wait: `Retry-After`, else its rate-limit reset headers. */
/** A sanity bound on a reset time an upstream gives for a spent quota: subscription limits reset within a week. */
const MAX_QUOTA_RESET_MS = 8 * 24 * 3_600_000;

function upstreamDelayMs(failure: UpstreamFailure, now: number): number | null {
  if (failure.retryAfterSeconds !== null) return failure.retryAfterSeconds * 1_000;
  return rateLimitResetMs(failure.rateLimitHeaders, now);
}
