import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { Principal } from '../access/index.js';
import { isGatewayError, type GatewayError } from '../errors/index.js';
import { ConsoleGate } from './console-gate.js';
import type { RequestGate } from './request-gate.js';
import { clientRequestId } from './request-id.js';

type Done = Parameters<onRequestHookHandler>[2];

/** One stage of the pipeline: runs before the route, may answer in its place by passing an error. */
export type Stage = (request: FastifyRequest, reply: FastifyReply, done: Done) => void;

/**
 * The stages every request goes through, in this order, before its body is read and its handler
 * runs; every `/v1` route is a Fastify route, so this list is the whole pipeline:
 *
 * 1. request id — the gateway's own id is the request's (`genReqId`); the caller's valid
 *    `X-Request-Id`, else ours, is echoed on the response;
 * 2. log record — routes with an `endpoint` get a request-log row and a cancellation; it comes
 *    before the shutdown check so that a request refused while draining is logged too;
 * 3. shutdown check — 503 `shutting_down` while the gateway drains;
 * 4. authentication and scope — routes with a `scope` need a token that carries it; an admin
 *    route takes the console's session cookie instead when no `Authorization` is sent, with the
 *    CSRF and origin checks of console-gate.ts on calls that change something;
 * 5. caller limits — a logged route's request counts against its token's, project's and team's
 *    rate limits and quotas (they need the principal, not the body: tokens are estimated from
 *    the body's length), or is refused with 429;
 * then Fastify reads the body (`app.ts`: JSON, compression, nesting and size rules), validates
 * and runs the handler; errors from any stage are answered by the one error handler (`app.ts`).
 * Metrics and tracing plug in as an `onResponse` stage beside the record's own `close` listener.
 */
export function pipelineStages(gate: RequestGate, consoleGate: ConsoleGate | null): readonly Stage[] {
  return [requestIdStage, recordStage(gate), shutdownStage(gate), authenticationStage(gate, consoleGate), limitStage(gate)];
}

export function registerPipeline(app: FastifyInstance, gate: RequestGate, consoleGate: ConsoleGate | null): void {
  app.decorateRequest('principal', null);
  app.decorateRequest('consoleCaller', null);
  app.decorateRequest('record', null);
  app.decorateRequest('cancellation', null);
  app.addHook('preClose', (done) => {
    gate.close();
    done();
  });
  app.decorateRequest('limitRefusal', null);
  for (const stage of pipelineStages(gate, consoleGate)) app.addHook('onRequest', stage);
  app.addHook('preValidation', answerHeldRefusal);
}

const requestIdStage: Stage = (request, reply, done) => {
  reply.header('x-request-id', clientRequestId(request.raw) ?? request.id);
  done();
};

function shutdownStage(gate: RequestGate): Stage {
  return (request, reply, done) => {
    // Draining: the client (a load balancer) is told to go by its connection's closing.
    if (gate.draining) reply.header('connection', 'close');
    if (request.routeOptions.config.probe === true) return done();
    const refusal = gate.refusal();
    if (refusal === null) return done();
    done(refusal);
  };
}

function recordStage(gate: RequestGate): Stage {
  return (request, reply, done) => {
    const { endpoint } = request.routeOptions.config;
    if (endpoint !== undefined) {
      const tracked = gate.track(request.raw, reply.raw, request.id, endpoint, clientRequestId(request.raw));
      request.record = tracked.record;
      request.cancellation = tracked.cancellation;
    }
    done();
  };
}

function authenticationStage(gate: RequestGate, consoleGate: ConsoleGate | null): Stage {
  return (request, _reply, done) => {
    const { scope } = request.routeOptions.config;
    if (scope === undefined) return done();
    // The console's cookie is taken by the admin API alone, and only when no bearer token is sent.
    if (scope === 'admin' && consoleGate !== null && request.headers.authorization === undefined) {
      const secret = ConsoleGate.secretOf(request.headers.cookie);
      if (secret !== null) {
        consoleGate
          .admit(request, secret)
          .then(({ principal, caller }) => {
            request.principal = gate.checked(principal, scope, request.record);
            request.consoleCaller = caller;
          })
          .then(() => done(), done);
        return;
      }
    }
    let principal: Principal | Promise<Principal>;
    try {
      principal = gate.admit(authorizationOf(request), scope, request.record);
    } catch (error) {
      return done(error as Error);
    }
    if (principal instanceof Promise) {
      principal.then((resolved) => {
        request.principal = resolved;
        done();
      }, done);
      return;
    }
    request.principal = principal;
    done();
  };
}

/** The `Authorization` header, else, on a route that takes it, `x-api-key` as a bearer token. */
function authorizationOf(request: FastifyRequest): string | undefined {
  const { authorization } = request.headers;
  if (authorization !== undefined || request.routeOptions.config.apiKeyHeader !== true) return authorization;
  const key = request.headers['x-api-key'];
  return typeof key === 'string' && key.trim() !== '' ? `Bearer ${key.trim()}` : undefined;
}

/** Bytes per token of a JSON body, roughly (English text and JSON punctuation): the reservation a request's tokens start with. */
const BYTES_PER_TOKEN = 4;

function limitStage(gate: RequestGate): Stage {
  return (request, _reply, done) => {
    const { principal, record } = request;
    // A token without limits (the common case) costs this one check.
    if (principal === null || record === null || principal.holders.length === 0) return done();
    const pending = gate.limit(principal, record, estimatedTokens(request));
    if (pending === null) return done();
    pending.then(
      () => done(),
      (error: unknown) => {
        if (!heldUntilBodyRead(request, error)) return done(error as Error);
        request.limitRefusal = error;
        done();
      },
    );
  };
}

/**
 * A caller's own 429 on a JSON body is answered once the body is read (`answerHeldRefusal`), so
 * that its log row has the model it names (the model filter finds it): Node would read the body
 * anyway, to discard it and keep the connection. Other bodies (an audio upload) are refused at once.
 */
function heldUntilBodyRead(request: FastifyRequest, error: unknown): error is GatewayError {
  if (!isGatewayError(error) || (error.code !== 'rate_limit_exceeded' && error.code !== 'quota_exceeded')) return false;
  return request.headers['content-type']?.toLowerCase().startsWith('application/json') === true;
}

/** The held 429, before validation and the handler: nothing of the request runs but the body's parse. */
function answerHeldRefusal(request: FastifyRequest, _reply: FastifyReply, done: Done): void {
  if (request.limitRefusal === null) return done();
  done(request.limitRefusal);
}

/** A multipart upload (audio) is not text: its tokens are known only from the usage. */
function estimatedTokens(request: FastifyRequest): number {
  const length = Number(request.headers['content-length']);
  if (!(length > 0) || request.headers['content-type']?.startsWith('multipart/') === true) return 0;
  return Math.ceil(length / BYTES_PER_TOKEN);
}
