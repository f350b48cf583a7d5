import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Principal, Scope } from '../../access/index.js';
import type { Cancellation } from '../../core/index.js';
import type { RequestRecord } from '../../usage/index.js';

/** A request that passed the gate: authenticated, tracked, its JSON body read. */
export interface DirectRequest {
  raw: IncomingMessage;
  response: ServerResponse;
  body: unknown;
  principal: Principal;
  record: RequestRecord;
  cancellation: Cancellation;
}

/**
 * A POST route served straight from Node's HTTP server, before Fastify's router: for the hot
 * routes, where Fastify's per-request machinery (router, hooks, reply pipeline) is measurable
 * against the upstream call itself. The gate, the body rules and the error answers are the same
 * as for the Fastify routes.
 */
export interface DirectRoute {
  path: string;
  scope: Scope;
  /** The request log's name for the route. */
  endpoint: string;
  /** Sends the response; a rejection before the first byte is answered as an error. */
  handle(request: DirectRequest): Promise<void>;
}
