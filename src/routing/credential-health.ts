import type { FailureClass, UpstreamFailure } from '../errors/index.js';
import { maskSecrets } from '../core/index.js';
import { rateLimitResetMs } from './rate-limit-reset.js';

/**
 * - `healthy`: used.
 * - `cooling` until `until`: rate limited (the upstream's own delay) or failing (5xx, timeouts,
 *   connection failures: exponential backoff). When the time has come, one request probes it.
 * - `failed`: the upstream refused the credential itself (401/403); until an operator resets it.
 * - `disabled`: by an operator.
 */
export type CredentialState = 'healthy' | 'cooling' | 'failed' | 'disabled';

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
    const status = this.statuses.get(credentialId);
    if (status === undefined || status.state === 'healthy') return;
    if (status.state === 'cooling') this.change(credentialId, status, { ...HEALTHY, since: this.now() }, 'answered');
  }

  /** A taken credential was not used after all, or its attempt failed for a reason not its own. */
  released(credentialId: string): void {
    this.probing.delete(credentialId);
  }

  /** What a classified failure does to the credential; the caller's own mistakes do nothing. */
  failed(credentialId: string, failure: UpstreamFailure): void {
    this.probing.delete(credentialId);
    const status = this.status(credentialId);
    if (failure.class === 'caller' || status.state === 'disabled' || status.state === 'failed') return;
    const now = this.now();
    const lastError = `${failure.class}${failure.status === null ? '' : ` ${failure.status}`}: ${maskSecrets(failure.message).slice(0, 200)}`;
    if (failure.class === 'auth') {
      const reason = `the upstream refused the credential (${failure.status ?? 'auth'})`;
      this.change(credentialId, status, { state: 'failed', until: null, reason, since: now, cooldownsInARow: status.cooldownsInARow, cause: 'auth', lastError }, reason);
      return;
    }
    // A request that was already under way when the cooldown began failing too is not a new step:
    // a burst of ten concurrent 500s is one failure of the credential, not ten doublings.
    const stillCooling = status.state === 'cooling' && (status.until as number) > now;
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
          : `${failure.class} failure${failure.status === null ? '' : ` (${failure.status})`}, backoff step ${step}`;
    this.change(credentialId, status, { state: 'cooling', until: now + delay, reason, since: now, cooldownsInARow: step, cause: failure.class, lastError }, reason);
  }

  /** By an operator: out of use until enabled. */
  disable(credentialId: string, reason = 'disabled by an operator'): void {
    const status = this.status(credentialId);
    if (status.state === 'disabled') return;
    this.change(credentialId, status, { state: 'disabled', until: null, reason, since: this.now(), cooldownsInARow: 0, cause: null, lastError: status.lastError }, reason);
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
  }

  private change(credentialId: string, from: CredentialStatus, to: CredentialStatus, reason: string): void {
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
