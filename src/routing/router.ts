import { GatewayError, isGatewayError, type ErrorCode, type FailureClass, type UpstreamFailure } from '../errors/index.js';
import type { ModelType } from '../config/index.js';
import type { AnswerHead, Attempt, Credential } from '../providers/provider-adapter.js';
import type { CatalogModel, Route } from './model-catalog.js';
import { routeOrder } from './route-order.js';

/** One try of one credential for a request, as the router saw it end. */
export interface AttemptOutcome {
  readonly credentialId: string;
  readonly startedAt: number;
  readonly durationMs: number;
  /** Null for the attempt that succeeded. */
  readonly error: unknown;
  /** What failed, classified; null for the attempt that succeeded. */
  readonly failure: UpstreamFailure | null;
  /** The upstream answer's status and head, when one arrived: rate-limit state is read from successes too. */
  readonly statusCode: number | null;
  readonly answerHead: AnswerHead | null;
}

/**
 * What the router tells about a request's attempts as they happen: the request record keeps
 * which credential was tried last (the log names it even when all failed) and each failure with
 * its cause (the request's warn lines).
 */
export interface AttemptObserver {
  upstream: string | null;
  noteUpstreamFailure(credentialId: string, error: unknown, failure: UpstreamFailure): void;
}

export interface RouteCall {
  cancellation: AbortSignal;
  observer: AttemptObserver;
}

export interface Routed<T, Type extends ModelType = ModelType> {
  value: T;
  route: Route<Type>;
  /** Every attempt, in order, the successful one last. */
  attempts: readonly AttemptOutcome[];
}

export interface RouterOptions {
  /** A number in [0, 1): the weighted draw of the order. Tests fix it. */
  random?: () => number;
  /** Milliseconds since the epoch, for attempt times (and, later, cooldowns). Tests fix it. */
  now?: () => number;
}

/**
 * The one place that decides which credential serves a call: a model's candidates in the order to
 * try them, then the attempts with failover. Every service goes through it, so what routing learns
 * next (cooldowns, session affinity, limits) is added here once.
 */
export class Router {
  private readonly random: () => number;
  private readonly now: () => number;

  constructor(options: RouterOptions = {}) {
    this.random = options.random ?? Math.random;
    this.now = options.now ?? Date.now;
  }

  /** The model's candidate routes, in the order to try them (a weighted draw without replacement). */
  candidates<Type extends ModelType>(model: CatalogModel<Type>): readonly Route<Type>[] {
    return routeOrder(model, this.random);
  }

  /** Runs `operation` on the model's candidates with failover. */
  route<T, Type extends ModelType>(model: CatalogModel<Type>, call: RouteCall, operation: RoutedOperation<T, Type>): Promise<Routed<T, Type>> {
    return this.attempt(this.candidates(model), call, operation);
  }

  /**
   * Tries `operation` on each candidate in order until one succeeds. A retryable failure moves on
   * to the next; anything else, the last candidate's failure, or a cancelled call is thrown.
   */
  async attempt<T, Type extends ModelType>(candidates: readonly Route<Type>[], call: RouteCall, operation: RoutedOperation<T, Type>): Promise<Routed<T, Type>> {
    const { cancellation, observer } = call;
    const attempts: AttemptOutcome[] = [];
    let lastError: unknown;
    for (const route of candidates) {
      const credentialId = route.credential.id;
      observer.upstream = credentialId;
      const attempt = new CredentialAttempt(route.credential);
      const startedAt = this.now();
      try {
        const value = await operation(route, attempt);
        attempts.push({ credentialId, startedAt, durationMs: this.now() - startedAt, error: null, failure: null, statusCode: attempt.statusCode, answerHead: attempt.answerHead });
        return { value, route, attempts };
      } catch (error) {
        lastError = error;
        if (cancellation.aborted) throw error;
        const failure = failureOf(error, credentialId);
        attempts.push({ credentialId, startedAt, durationMs: this.now() - startedAt, error, failure, statusCode: attempt.statusCode, answerHead: attempt.answerHead });
        observer.noteUpstreamFailure(credentialId, error, failure);
        if (!isGatewayError(error) || !error.retryable) throw error;
      }
    }
    // Built only here: an Error captures a stack trace, too costly to make on every request.
    throw lastError ?? new GatewayError('no_upstream_available', 'No upstream is configured for this model.');
  }
}

/** What a service runs on one candidate: the route's capability, called with the attempt's credential. */
export type RoutedOperation<T, Type extends ModelType> = (route: Route<Type>, attempt: Attempt) => Promise<T>;

/** One try of one credential: what the adapter is given, and what it tells of the upstream's answer. */
class CredentialAttempt implements Attempt {
  statusCode: number | null = null;
  answerHead: AnswerHead | null = null;

  constructor(readonly credential: Credential) {}

  answered(statusCode: number, head: AnswerHead): void {
    this.statusCode = statusCode;
    this.answerHead = head;
  }
}

/** The class of an upstream error the classifier did not see (one raised while reading a stream or an answer). */
const CLASS_OF_CODE: Partial<Record<ErrorCode, FailureClass>> = {
  upstream_bad_request: 'caller',
  upstream_auth_failed: 'auth',
  upstream_rate_limited: 'rate_limit',
  upstream_timeout: 'timeout',
  upstream_invalid_response: 'protocol',
  upstream_error: 'server',
  engine_busy: 'overloaded',
};

/** A failed attempt as a structured outcome: the classifier's when it classified it, else read from its code. */
export function failureOf(error: unknown, credentialId: string): UpstreamFailure {
  if (isGatewayError(error) && error.upstream !== undefined) return error.upstream;
  return {
    class: (isGatewayError(error) ? CLASS_OF_CODE[error.code] : undefined) ?? 'server',
    status: null,
    retryAfterSeconds: isGatewayError(error) ? (error.retryAfterSeconds ?? null) : null,
    rateLimitHeaders: {},
    credentialId,
    message: error instanceof Error ? error.message : String(error),
  };
}
