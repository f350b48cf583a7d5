import type { FastifyInstance } from 'fastify';
import type { Principal } from '../access/index.js';
import type { RequestGate } from './request-gate.js';
import { clientRequestId } from './request-id.js';

/**
 * Every request Fastify serves: its id on the response, a request-log record for the routes that
 * have an endpoint name, and the bearer-token check for the routes that name a scope.
 */
export function registerRequestLifecycle(app: FastifyInstance, gate: RequestGate): void {
  app.decorateRequest('principal', null);
  app.decorateRequest('record', null);
  app.decorateRequest('cancellation', null);
  app.addHook('preClose', (done) => {
    gate.close();
    done();
  });
  app.addHook('onRequest', (request, reply, done) => {
    const clientId = clientRequestId(request.raw);
    reply.header('x-request-id', clientId ?? request.id);
    const { scope, endpoint } = request.routeOptions.config;
    if (endpoint !== undefined) {
      const tracked = gate.track(request.raw, reply.raw, request.id, endpoint, clientId);
      request.record = tracked.record;
      request.cancellation = tracked.cancellation;
    }
    const refusal = gate.refusal();
    if (refusal !== null) {
      reply.header('connection', 'close');
      return done(refusal);
    }
    if (scope === undefined) return done();
    let principal: Principal | Promise<Principal>;
    try {
      principal = gate.admit(request.headers.authorization, scope, request.record);
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
  });
}
