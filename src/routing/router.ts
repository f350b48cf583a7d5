import type { ModelType } from '../config/index.js';
import { GatewayError, isGatewayError } from '../errors/index.js';
import type { Attempt } from '../providers/provider-adapter.js';
import { RecentAttempts } from './recent-attempts.js';
import { AttemptRecorder, type AttemptObserver, type AttemptOutcome } from './attempt-outcome.js';
import { CredentialHealth } from './credential-health.js';
import { availableRoutes } from './ejection-cap.js';
import { InFlight } from './in-flight.js';
import type { CatalogModel, Route } from './model-catalog.js';
import { chooseForSession, chooseUnbound } from './pool-choice.js';
import { hash32 } from './rendezvous.js';
import { SessionBindings, type RoutingSession } from './session-bindings.js';
import type { SessionSource } from './session-id.js';
import { unavailable } from './unavailable.js';

export type { AttemptObserver, AttemptOutcome } from './attempt-outcome.js';

/**
 * What became of a request's session binding (`X-Session-Affinity`):
 * - `new`: it had none and is now bound to the credential that answered;
 * - `kept`: its credential answered;
 * - `moved`: its credential was unavailable, and the one that answered holds the binding now;
 * - `overflow`: its credential was at `max_in_flight`; another answered, the binding stays.
 */
export type Affinity = 'new' | 'kept' | 'moved' | 'overflow';

export interface RoutedSession {
  readonly id: string;
  readonly source: SessionSource;
  readonly affinity: Affinity;
}

export interface RouteCall {
  cancellation: AbortSignal;
  observer: AttemptObserver;
  /** The request's session, when it has one: routed to its bound credential. */
  session?: RoutingSession | null;
  /** Who sent it (the team): one caller's failures are told from a credential failing for all. */
  caller?: string | null;
}

export interface Routed<T, Type extends ModelType = ModelType> {
  value: T;
  route: Route<Type>;
  /** Every attempt, in order, the successful one last. */
  attempts: readonly AttemptOutcome[];
  /** Null for a request without a session. */
  session: RoutedSession | null;
}

export interface RouterOptions {
  /** A number in [0, 1): the weighted draws. Tests fix it. */
  random?: () => number;
  /** Milliseconds since the epoch, for attempt times and cooldowns. Tests fix it. */
  now?: () => number;
  /** The credentials' states; one for the whole gateway (the admin API reads and changes it). */
  health?: CredentialHealth;
  inFlight?: InFlight;
  /** Where sessions are bound; without it sessions are routed by their rendezvous choice alone. */
  bindings?: SessionBindings | null;
  /** `routing.max_attempts`: credentials tried for one request. */
  maxAttempts?: number;
  /** `routing.queue_timeout`: how long a request waits for a credential below its `max_in_flight`. */
  queueTimeoutMs?: number;
}

/** What a service runs on one credential: the route's capability, called with the attempt. */
export type RoutedOperation<T, Type extends ModelType> = (route: Route<Type>, attempt: Attempt) => Promise<T>;

/**
 * The one place that decides which credential serves a call. For each attempt it takes the model's
 * credentials that are available (their state allows it, they were not tried for this request)
 * and have room (`max_in_flight`), puts a session on its bound credential or chooses by the
 * model's strategy, runs the operation, and reports the outcome to the credential's state. A
 * retryable failure moves on to the next credential, up to `maxAttempts`. See docs/routing.md.
 */
export class Router {
  readonly health: CredentialHealth;
  readonly inFlight: InFlight;
  /** Attempts and failures per credential over the last minutes, for operators (not for routing). */
  readonly recent: RecentAttempts;
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly bindings: SessionBindings | null;
  private readonly maxAttempts: number;
  private readonly queueTimeoutMs: number;

  constructor(options: RouterOptions = {}) {
    this.random = options.random ?? Math.random;
    this.now = options.now ?? Date.now;
    this.health = options.health ?? new CredentialHealth({ now: this.now });
    this.recent = new RecentAttempts(this.now);
    this.inFlight = options.inFlight ?? new InFlight();
    this.bindings = options.bindings ?? null;
    this.maxAttempts = options.maxAttempts ?? 3;
    this.queueTimeoutMs = options.queueTimeoutMs ?? 5_000;
  }

  /**
   * What a request gets when no credential is left to try: the last failure, unless it was a
   * rate limit or a spent quota and the whole pool is now out of use, when the pool's own answer
   * says more (`upstream_quota_exhausted` or `upstream_rate_limited`, and when the first credential
   * comes back).
   */
  private exhausted(model: CatalogModel, lastError: unknown): unknown {
    if (lastError === undefined) return unavailable(model, this.health, this.now());
    const failureClass = isGatewayError(lastError) ? lastError.upstream?.class : undefined;
    if (failureClass !== 'quota' && failureClass !== 'rate_limit') return lastError;
    return model.routes.some((route) => this.health.usable(route.credential.id)) ? lastError : unavailable(model, this.health, this.now());
  }

  /** Runs `operation` on the model's credentials with failover. */
  async route<T, Type extends ModelType>(model: CatalogModel<Type>, call: RouteCall, operation: RoutedOperation<T, Type>): Promise<Routed<T, Type>> {
    const { cancellation, observer } = call;
    const session = call.session ?? null;
    const bindingKey = session === null ? null : SessionBindings.key(session);
    const bound = bindingKey === null || this.bindings === null ? null : await this.bindings.lookup(bindingKey);
    const recorder = new AttemptRecorder(observer, this.now);
    const tried = new Set<string>();
    let queueDeadline: number | null = null;
    for (;;) {
      const available = availableRoutes(model.routes, tried, this.health);
      if (available.length === 0) throw this.exhausted(model, recorder.lastError);
      const withRoom = available.filter((route) => this.inFlight.hasRoom(route.credential.id, route.maxInFlight));
      if (withRoom.length === 0) {
        queueDeadline ??= this.now() + this.queueTimeoutMs;
        if (await this.inFlight.waitForChange(queueDeadline - this.now(), cancellation)) continue;
        if (cancellation.aborted) throw cancellation.reason;
        throw new GatewayError('no_upstream_available', `Every credential of ${model.id} is at its max_in_flight; waited ${this.queueTimeoutMs} ms.`, {
          retryAfterSeconds: 1,
        });
      }
      const route = this.pick(model, withRoom, bindingKey === null ? null : { bound, bindingKey, firstAttempt: tried.size === 0 });
      const credentialId = route.credential.id;
      tried.add(credentialId);
      this.health.take(credentialId);
      const release = this.inFlight.acquire(credentialId);
      const attempt = recorder.start(route.credential);
      try {
        const value = await operation(route, attempt);
        this.health.succeeded(credentialId);
        this.recent.note(credentialId, false, this.now() - attempt.startedAt);
        observer.holdUntilFinished(release);
        const attempts = recorder.succeeded(attempt);
        const routed = session === null ? null : this.settleBinding(model, session, bindingKey as string, bound, credentialId, tried);
        return { value, route, attempts, session: routed };
      } catch (error) {
        release();
        if (cancellation.aborted) {
          this.health.released(credentialId);
          throw error;
        }
        const failure = recorder.failed(attempt, error);
        // The caller's own mistakes, and our bugs, say nothing about the credential.
        const credentialAtFault = failure.class !== 'caller' && isGatewayError(error);
        if (credentialAtFault) this.health.failed(credentialId, failure, call.caller ?? null);
        else this.health.released(credentialId);
        this.recent.note(credentialId, credentialAtFault, this.now() - attempt.startedAt);
        if (!isGatewayError(error) || !error.retryable || recorder.count >= this.maxAttempts) throw error;
      }
    }
  }

  /** This attempt's credential: the session's own while it may serve, else the strategy's choice. */
  private pick<Type extends ModelType>(
    model: CatalogModel<Type>,
    withRoom: readonly Route<Type>[],
    session: { bound: string | null; bindingKey: string; firstAttempt: boolean } | null,
  ): Route<Type> {
    if (session === null) return chooseUnbound(model.strategy, withRoom, this.inFlight, this.random);
    if (session.bound !== null && session.firstAttempt) {
      const own = withRoom.find((route) => route.credential.id === session.bound);
      if (own !== undefined) return own;
    }
    // Hashed only here: a session kept on its credential (most requests) never needs its rendezvous order.
    return chooseForSession(model.strategy, withRoom, this.inFlight, hash32(session.bindingKey));
  }

  /**
   * What the answer means for the session's binding, and the binding changed to match. The write
   * is not waited for: the response need not wait for it, and a request of the same session that
   * came before it lands would choose alike (the rendezvous order).
   */
  private settleBinding(
    model: CatalogModel,
    session: RoutingSession,
    key: string,
    bound: string | null,
    answered: string,
    tried: ReadonlySet<string>,
  ): RoutedSession {
    let affinity: Affinity;
    if (bound === null) {
      affinity = 'new';
      void this.bindings?.bind(key, answered, session.team);
    } else if (bound === answered) {
      affinity = 'kept';
    } else if (!tried.has(bound) && this.health.status(bound).state === 'healthy' && model.routes.some((route) => route.credential.id === bound)) {
      // Its credential is fine, only full: the binding stays. One that failed this request moves it,
      // cooled or not (a failure may not be enough to cool a credential, it is enough to move on).
      affinity = 'overflow';
    } else {
      affinity = 'moved';
      void this.bindings?.move(key, bound, answered);
    }
    return { id: session.id, source: session.source, affinity };
  }
}
