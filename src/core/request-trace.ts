/** An upstream attempt as a trace tells it when it ends. */
export interface TracedAttempt {
  readonly credential: string;
  /** `ok`, or the error code it ended with. */
  readonly outcome: string;
  readonly status: number | null;
  readonly ms: number;
}

/**
 * One request's trace, as the parts that see its steps tell it (observability/tracing.ts makes
 * it): the router starts and ends a child span per upstream attempt, and the request's own span
 * ends with the request.
 */
export interface RequestTrace {
  /** An attempt begins (at `startedAt`, ms since the epoch): its span's W3C `traceparent`, to send upstream. */
  attemptStarted(credentialId: string, startedAt: number): string;
  /** That attempt ended (the last one started that has not ended). */
  attemptEnded(attempt: TracedAttempt): void;
}

/** What starts a request's trace: continuing the caller's `traceparent` (and `tracestate`) when it sent a valid one. */
export interface RequestTracing {
  start(endpoint: string, traceparent: string | undefined, tracestate: string | undefined, startedAt: number): RequestTrace;
}
