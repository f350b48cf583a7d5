import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Principal } from '../../access/index.js';
import { GatewayError } from '../../errors/index.js';
import { announcesBody, watchRequestBody } from '../body-timeout.js';
import { corsHandler } from '../cors.js';
import { settleError, type ErrorLogger } from '../error-response.js';
import type { RequestGate } from '../request-gate.js';
import { clientRequestId, generateRequestId } from '../request-id.js';
import type { DirectRoute } from './direct-route.js';
import { readJsonBody } from './read-json-body.js';
import { sendError } from './send-response.js';

export interface DirectServerOptions {
  gate: RequestGate;
  logger: ErrorLogger;
  bodyLimitBytes: number;
  /** Longest silence while a request body arrives. */
  bodyTimeoutMs: number;
  /** Connections open at once; past it new ones are closed as they arrive. */
  maxConnections: number;
  /** Browser origins allowed to call the API (`server.cors.allowed_origins`). */
  corsOrigins: readonly string[];
}

/** Fastify's defaults, which its own server would have had. */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;

/**
 * The HTTP server, for Fastify's `serverFactory`: POSTs to a direct route are served here, every
 * other request goes to Fastify. Shutdown, listening and client errors stay Fastify's.
 */
export function directServer(routes: readonly DirectRoute[], options: DirectServerOptions): (fastifyHandler: RequestListener) => Server {
  const byPath = new Map(routes.map((route) => [route.path, route]));
  const onBodyTimeout = bodyTimedOut(options.gate);
  const cors = corsHandler(options.corsOrigins);
  return (fastifyHandler) => {
    const server = createServer((request, response) => {
      if (cors !== null && cors(request, response)) return;
      if (announcesBody(request)) watchRequestBody(request, response, options.bodyTimeoutMs, onBodyTimeout);
      if (request.method === 'POST') {
        const url = request.url as string;
        const query = url.indexOf('?');
        const route = byPath.get(query === -1 ? url : url.slice(0, query));
        if (route !== undefined) return serve(route, request, response, options);
      }
      fastifyHandler(request, response);
    });
    server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
    // Bodies are timed by silence (watchRequestBody), not by how long the whole upload takes.
    server.requestTimeout = 0;
    server.setTimeout(0);
    server.maxConnections = options.maxConnections;
    // A socket timer armed for a body that has since arrived may still fire; without a listener
    // here Node would destroy the socket, and with it whatever response it is carrying by then.
    server.on('timeout', ignoreStaleTimeout);
    return server;
  };
}

function ignoreStaleTimeout(): void {}

/** Answers 408 `request_timeout` when nothing was sent yet, then closes the connection: the rest of the body can never be trusted to arrive. */
function bodyTimedOut(gate: RequestGate): (request: IncomingMessage, response: ServerResponse) => void {
  return (request, response) => {
    const tracked = gate.find(response);
    if (response.headersSent) {
      response.destroy();
      return;
    }
    const error = new GatewayError('request_timeout', 'The request body stopped arriving; send it again.');
    if (tracked !== undefined) tracked.record.errorCode ??= error.code;
    sendError(response, error, ['x-request-id', tracked?.record.publicId ?? clientRequestId(request) ?? generateRequestId(), 'connection', 'close']);
  };
}

function serve(route: DirectRoute, request: IncomingMessage, response: ServerResponse, options: DirectServerOptions): void {
  const { gate } = options;
  const id = generateRequestId();
  const clientId = clientRequestId(request);
  const { record, cancellation } = gate.track(request, response, id, route.endpoint, clientId);
  const fail = (error: unknown, closeConnection = false): void => {
    const headers = ['x-request-id', record.publicId];
    if (closeConnection) headers.push('connection', 'close');
    sendError(response, settleError(error, record, options.logger, id, clientId), headers);
  };

  const refusal = gate.refusal();
  if (refusal !== null) return fail(refusal, true);
  const run = (principal: Principal): void =>
    readJsonBody(request, options.bodyLimitBytes, (error, body) => {
      // The rest of an oversized body is not worth reading: answer, then drop the connection.
      if (error !== null) return fail(error, error.code === 'payload_too_large');
      route.handle({ raw: request, response, body, principal, record, cancellation }).catch((error: unknown) => fail(error));
    });
  let principal: Principal | Promise<Principal>;
  try {
    principal = gate.admit(request.headers.authorization, route.scope, record);
  } catch (error) {
    return fail(error);
  }
  if (principal instanceof Promise) principal.then(run, (error: unknown) => fail(error));
  else run(principal);
}
