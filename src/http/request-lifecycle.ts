import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { requireScope, type Principal, type TokenAuthenticator } from '../access/index.js';
import { GatewayError } from '../errors/index.js';
import { Cancellation } from '../providers/provider-adapter.js';
import { RequestRecord, type RequestRecorder } from '../usage/index.js';

/**
 * Every request: its id on the response, a request-log record for the routes that have an
 * endpoint name, and the bearer-token check for the routes that name a scope.
 */
export function registerRequestLifecycle(app: FastifyInstance, authenticator: TokenAuthenticator, recorder: RequestRecorder): void {
  app.decorateRequest('principal', null);
  app.decorateRequest('record', null);
  app.decorateRequest('cancellation', null);
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    const { scope, endpoint } = request.routeOptions.config;
    if (endpoint !== undefined) startRecord(request, reply, endpoint, recorder);
    if (closing) {
      // A request that arrives on a kept-alive connection during shutdown: refuse it and let the client reconnect elsewhere.
      reply.header('connection', 'close');
      return done(new GatewayError('shutting_down', 'The gateway is shutting down; retry on another instance.', { retryAfterSeconds: 1 }));
    }
    if (scope === undefined) return done();
    let principal: Principal | Promise<Principal>;
    try {
      principal = authenticator.authenticate(request.headers.authorization);
    } catch (error) {
      return done(error as Error);
    }
    if (principal instanceof Promise) {
      principal.then((resolved) => done(admit(request, resolved, scope)), done);
      return;
    }
    done(admit(request, principal, scope));
  });
}

function admit(request: FastifyRequest, principal: Principal, scope: NonNullable<FastifyRequest['routeOptions']['config']['scope']>): Error | undefined {
  request.principal = principal;
  const { record } = request;
  if (record !== null) {
    record.tokenId = principal.tokenId;
    record.team = principal.team;
    record.project = principal.project;
  }
  try {
    requireScope(principal, scope);
    return undefined;
  } catch (error) {
    return error as Error;
  }
}

function startRecord(request: FastifyRequest, reply: FastifyReply, endpoint: string, recorder: RequestRecorder): void {
  const record = new RequestRecord(request.id, endpoint);
  const cancellation = new Cancellation();
  request.record = record;
  request.cancellation = cancellation;
  recorder.begin();
  const response = reply.raw;
  // One listener per request does both jobs: stop the upstream call if the client left, and log.
  response.once('close', () => {
    if (response.writableFinished) return recorder.finish(record, response.statusCode);
    cancellation.cancel();
    recorder.finishIncomplete(record);
  });
}
