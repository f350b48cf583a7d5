import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { TrustedProxies } from '../core/index.js';
import { GatewayError } from '../errors/index.js';
import type { Logger } from '../observability/logger.js';
import { announcesBody, watchRequestBody } from './body-timeout.js';
import { guardConnections } from './connection-guard.js';
import { corsHandler } from './cors.js';
import type { RequestGate } from './request-gate.js';
import { clientRequestId, generateRequestId } from './request-id.js';
import { sendError } from './send-response.js';

export interface NodeServerOptions {
  gate: RequestGate;
  /** Longest silence while a request body arrives. */
  bodyTimeoutMs: number;
  /** Connections open at once; at it an idle one makes room, or the new one is closed. */
  maxConnections: number;
  /** Connections one client address may hold at once; 0: no share. */
  maxConnectionsPerClient: number;
  /** Longest a connection may take to bring a whole request head (its first, or the next after an idle wait). */
  headerTimeoutMs: number;
  /** Browser origins allowed to call the API (`server.cors.allowed_origins`). */
  corsOrigins: readonly string[];
  /** Reverse proxies (`server.trusted_proxies`): they carry many clients, so they have no per-client share. */
  trustedProxies: TrustedProxies;
}

/** Fastify's defaults, which its own server would have had. */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;
/** Node checks the heads' deadlines on an interval: a quarter of the timeout, at most a second. */
const MAX_HEADER_CHECK_INTERVAL_MS = 1_000;

/**
 * The HTTP server, for Fastify's `serverFactory`: what concerns the connection rather than a
 * route — CORS preflights (answered before routing), the body's silence timer, the head's
 * timeout, the connection caps (connection-guard.ts) and keep-alive — then every request goes to
 * Fastify, whose hooks are the pipeline (pipeline.ts).
 */
export function nodeServer(options: NodeServerOptions, logger: Logger): (fastifyHandler: RequestListener) => Server {
  const onBodyTimeout = bodyTimedOut(options.gate);
  const cors = corsHandler(options.corsOrigins);
  const connectionsCheckingInterval = Math.min(MAX_HEADER_CHECK_INTERVAL_MS, Math.ceil(options.headerTimeoutMs / 4));
  return (fastifyHandler) => {
    const server = createServer({ connectionsCheckingInterval }, (request, response) => {
      if (cors?.(request, response)) return;
      if (announcesBody(request)) watchRequestBody(request, response, options.bodyTimeoutMs, onBodyTimeout);
      fastifyHandler(request, response);
    });
    server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
    // A connection that sends nothing, or a head that never ends, is answered 408 and closed
    // (client-error.ts) once this passes: Node times it from the connection, or from the first
    // byte of a later request; the wait between requests is the keep-alive timeout's.
    server.headersTimeout = options.headerTimeoutMs;
    // Bodies are timed by silence (watchRequestBody), not by how long the whole upload takes.
    server.requestTimeout = 0;
    server.setTimeout(0);
    guardConnections(
      server,
      { maxConnections: options.maxConnections, maxConnectionsPerClient: options.maxConnectionsPerClient, unshared: options.trustedProxies },
      logger,
    );
    server.on('timeout', closeIfIdle);
    return server;
  };
}

/**
 * The socket's timer fired. Between requests it is the keep-alive timeout: the connection is
 * closed (with a listener here Node would leave that to us). A timer armed for a body that has
 * since arrived may also fire late; a response is then under way and must not be cut.
 */
function closeIfIdle(socket: Socket & { _httpMessage?: object | null }): void {
  if (socket._httpMessage === null || socket._httpMessage === undefined) socket.destroy();
}

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
