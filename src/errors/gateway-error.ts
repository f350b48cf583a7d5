import { ERROR_CODES, type ErrorCode } from './error-codes.js';
import type { UpstreamFailure } from './upstream-failure.js';

/** One entry of a 422 body's `detail`, in the shape FastAPI-style clients parse. */
export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export interface GatewayErrorOptions {
  param?: string | null;
  detail?: ValidationIssue[];
  retryAfterSeconds?: number;
  /** Overrides the code's default, e.g. an upstream 400 that another credential would also refuse. */
  retryable?: boolean;
  cause?: unknown;
  /** Set by the upstream failure classifier: what the router reads of a failed attempt. */
  upstream?: UpstreamFailure;
}

/**
 * The only error type that crosses layers. Anything else that reaches the HTTP edge is a bug
 * and is answered as `internal_error` without its message.
 */
export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly type: string;
  readonly retryable: boolean;
  readonly param: string | null;
  readonly detail: ValidationIssue[] | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly upstream: UpstreamFailure | undefined;

  constructor(code: ErrorCode, message: string, options: GatewayErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    const definition = ERROR_CODES[code];
    this.name = 'GatewayError';
    this.code = code;
    this.status = definition.status;
    this.type = definition.type;
    this.retryable = options.retryable ?? definition.retryable;
    this.param = options.param ?? null;
    this.detail = options.detail;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.upstream = options.upstream;
  }
}

export function isGatewayError(error: unknown): error is GatewayError {
  return error instanceof GatewayError;
}
