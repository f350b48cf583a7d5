import type { Principal, Scope } from '../access/index.js';
import type { RequestRecord } from '../usage/index.js';
import type { GatewayError } from '../errors/index.js';
import type { ConsoleCaller } from './console-gate.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a token needs for the route; routes without one need no token. */
    scope?: Scope;
    /** The name the request log uses for the route; routes without one are not logged. */
    endpoint?: string;
    /** The token may come in `x-api-key` when no `Authorization` is sent, as the Anthropic SDKs and Claude Code send it. */
    apiKeyHeader?: boolean;
    /** A probe (`/health`, `/ready`): answered while the gateway drains, when every other route is refused. */
    probe?: boolean;
  }
  interface FastifyRequest {
    principal: Principal | null;
    record: RequestRecord | null;
    /** Cancelled when the client leaves before its response is complete. */
    cancellation: AbortSignal | null;
    /** Set when an admin call was admitted by the console's session cookie (console-gate.ts). */
    consoleCaller: ConsoleCaller | null;
    /** The caller's own 429, held until the JSON body is read so that the log keeps its model (pipeline.ts); answered in place of any other error. */
    limitRefusal: GatewayError | null;
  }
}
