/**
 * Failures of the upstream HTTP/1.1 client below HTTP semantics. Each carries a stable `code`,
 * as Node's system errors (ECONNREFUSED, ECONNRESET…) do, so one mapping turns both into the
 * gateway's own errors (classifyTransport in classify-upstream-failure.ts).
 */
export class Http1Error extends Error {
  constructor(
    readonly code: 'HTTP1_PROTOCOL' | 'HTTP1_SOCKET_CLOSED' | 'HTTP1_POOL_CLOSED' | 'HTTP1_BODY',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'Http1Error';
  }
}

/** The upstream's bytes are not a well-formed HTTP/1.1 response. */
export class Http1ProtocolError extends Http1Error {
  constructor(message: string) {
    super('HTTP1_PROTOCOL', `invalid HTTP response from upstream: ${message}`);
  }
}
