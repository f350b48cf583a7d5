import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { GatewayError } from '../errors/index.js';
import { announcesBody, watchRequestBody } from './body-timeout.js';
import { corsHandler } from './cors.js';
import type { RequestGate } from './request-gate.js';
import { clientRequestId, generateRequestId } from './request-id.js';
import { sendError } from './send-response.js';

export interface NodeServerOptions {
  gate: RequestGate;
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
 * The HTTP server, for Fastify's `serverFactory`: what concerns the connection rather than a
 * route — CORS preflights (answered before routing), the body's silence timer, the connection
 * cap and keep-alive — then every request goes to Fastify, whose hooks are the pipeline
 * (pipeline.ts).
 */
export function nodeServer(options: NodeServerOptions): (fastifyHandler: RequestListener) => Server {
  const onBodyTimeout = bodyTimedOut(options.gate);
  const cors = corsHandler(options.corsOrigins);
  return (fastifyHandler) => {
    const server = createServer((request, response) => {
      if (cors !== null && cors(request, response)) return;
      if (announcesBody(request)) watchRequestBody(request, response, options.bodyTimeoutMs, onBodyTimeout);
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
    const record = gate.find(response);
    if (response.headersSent) {
      response.destroy();
      return;
    }
    const error = new GatewayError('request_timeout', 'The request body stopped arriving; send it again.');
    if (record !== undefined) record.errorCode ??= error.code;
    sendError(response, error, ['x-request-id', record?.publicId ?? clientRequestId(request) ?? generateRequestId(), 'connection', 'close']);
  };
}
