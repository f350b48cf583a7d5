import type { ServerResponse } from 'node:http';
import { requireScope, type Principal, type Scope, type TokenAuthenticator } from '../access/index.js';
import { GatewayError } from '../errors/index.js';
import { Cancellation } from '../providers/provider-adapter.js';
import { RequestRecord, type RequestRecorder } from '../usage/index.js';

export interface TrackedRequest {
  record: RequestRecord;
  cancellation: Cancellation;
}

/**
 * What every request goes through before its route runs, whichever server layer received it
 * (Fastify's routes, or the direct routes that bypass Fastify): shutdown refusal, the request-log
 * record, and the bearer-token check. One place, so both layers behave the same.
 */
export class RequestGate {
  private closing = false;

  constructor(
    private readonly authenticator: TokenAuthenticator,
    private readonly recorder: RequestRecorder,
  ) {}

  /** From now on requests are refused with 503 `shutting_down` (the connection is closed after the answer). */
  close(): void {
    this.closing = true;
  }

  /** A request that arrives on a kept-alive connection during shutdown: refuse it and let the client reconnect elsewhere. */
  refusal(): GatewayError | null {
    return this.closing ? new GatewayError('shutting_down', 'The gateway is shutting down; retry on another instance.', { retryAfterSeconds: 1 }) : null;
  }

  /** Starts the request-log row; it is written when the response closes, complete or not. */
  track(response: ServerResponse, id: string, endpoint: string, clientRequestId: string | null): TrackedRequest {
    const record = new RequestRecord(id, endpoint, clientRequestId);
    const cancellation = new Cancellation();
    const recorder = this.recorder;
    recorder.begin();
    // One listener per request does both jobs: stop the upstream call if the client left, and log.
    response.on('close', () => {
      if (response.writableFinished) return recorder.finish(record, response.statusCode);
      cancellation.cancel();
      recorder.finishIncomplete(record);
    });
    return { record, cancellation };
  }

  /**
   * The caller's identity, checked against the scope the route needs. Synchronous unless the token
   * table is being reloaded; throws (or rejects with) a GatewayError when the token does not pass.
   */
  admit(authorization: string | undefined, scope: Scope, record: RequestRecord | null): Principal | Promise<Principal> {
    const principal = this.authenticator.authenticate(authorization);
    if (principal instanceof Promise) return principal.then((resolved) => checked(resolved, scope, record));
    return checked(principal, scope, record);
  }
}

function checked(principal: Principal, scope: Scope, record: RequestRecord | null): Principal {
  if (record !== null) {
    record.tokenId = principal.tokenId;
    record.team = principal.team;
    record.project = principal.project;
  }
  requireScope(principal, scope);
  return principal;
}
