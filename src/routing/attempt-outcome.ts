import { isGatewayError, type ErrorCode, type FailureClass, type UpstreamFailure } from '../errors/index.js';
import type { AnswerHead, Attempt, Credential } from '../providers/provider-adapter.js';

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

/** An attempt as the request log keeps it. */
export interface AttemptSummary {
  readonly credential: string;
  /** `ok`, or the error code the attempt ended with. */
  readonly outcome: string;
  /** The upstream's HTTP status, when it answered. */
  readonly status: number | null;
  readonly ms: number;
}

/**
 * What the router tells the request about its attempts as they happen: which credential was tried
 * last (the log names it even when all failed), each failure with its cause (the request's warn
 * lines), every attempt for the request log, and the credential's in-flight slot, held until the
 * response has ended (a stream holds it to its last byte).
 */
export interface AttemptObserver {
  upstream: string | null;
  noteUpstreamFailure(credentialId: string, error: unknown, failure: UpstreamFailure): void;
  noteAttempt(attempt: AttemptSummary): void;
  holdUntilFinished(release: () => void): void;
  /** An attempt begins (`startedAt`: the router's clock, ms since the epoch): the W3C `traceparent` of its span, while tracing is on. */
  attemptStarted?(credentialId: string, startedAt: number): string | null;
}

/** One try of one credential: what the adapter is given, and what it tells of the upstream's answer. */
export class CredentialAttempt implements Attempt {
  statusCode: number | null = null;
  answerHead: AnswerHead | null = null;
  readonly startedAt: number;
  traceparent: string | null = null;

  constructor(
    readonly credential: Credential,
    now: number,
  ) {
    this.startedAt = now;
  }

  answered(statusCode: number, head: AnswerHead): void {
    this.statusCode = statusCode;
    this.answerHead = head;
  }
}

/** A request's attempts, kept as they end and told to its observer. */
export class AttemptRecorder {
  private readonly outcomes: AttemptOutcome[] = [];
  lastError: unknown = undefined;

  constructor(
    private readonly observer: AttemptObserver,
    private readonly now: () => number,
  ) {}

  get count(): number {
    return this.outcomes.length;
  }

  start(credential: Credential): CredentialAttempt {
    this.observer.upstream = credential.id;
    const attempt = new CredentialAttempt(credential, this.now());
    if (this.observer.attemptStarted !== undefined) attempt.traceparent = this.observer.attemptStarted(credential.id, attempt.startedAt);
    return attempt;
  }

  succeeded(attempt: CredentialAttempt): readonly AttemptOutcome[] {
    this.keep(attempt, null, null);
    return this.outcomes;
  }

  failed(attempt: CredentialAttempt, error: unknown): UpstreamFailure {
    const failure = failureOf(error, attempt.credential.id);
    this.lastError = error;
    this.keep(attempt, error, failure);
    this.observer.noteUpstreamFailure(attempt.credential.id, error, failure);
    return failure;
  }

  private keep(attempt: CredentialAttempt, error: unknown, failure: UpstreamFailure | null): void {
    const durationMs = this.now() - attempt.startedAt;
    const credentialId = attempt.credential.id;
    this.outcomes.push({
      credentialId,
      startedAt: attempt.startedAt,
      durationMs,
      error,
      failure,
      statusCode: attempt.statusCode,
      answerHead: attempt.answerHead,
    });
    const outcome = failure === null ? 'ok' : isGatewayError(error) ? error.code : 'internal_error';
    this.observer.noteAttempt({ credential: credentialId, outcome, status: attempt.statusCode ?? failure?.status ?? null, ms: durationMs });
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
    class: (isGatewayError(error) ? CLASS_OF_CODE[error.code] : undefined) ?? (isGatewayError(error) && !error.retryable ? 'caller' : 'server'),
    status: null,
    retryAfterSeconds: isGatewayError(error) ? (error.retryAfterSeconds ?? null) : null,
    rateLimitHeaders: {},
    credentialId,
    message: error instanceof Error ? error.message : String(error),
  };
}
