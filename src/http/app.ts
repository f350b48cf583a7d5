import fastifyMultipart from '@fastify/multipart';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { TokenAuthenticator } from '../access/index.js';
import type { TrustedProxies } from '../core/index.js';
import type { AdminRoute } from '../admin/index.js';
import type { Logger } from '../observability/logger.js';
import type { ModelCatalog } from '../routing/index.js';
import type {
  ChatCompletionService,
  EmbeddingService,
  NativeService,
  RerankService,
  MessagesService,
  ResponsesService,
  SpeechService,
  TranscriptionService,
} from '../services/index.js';
import type { RequestRecorder } from '../usage/index.js';
import { errorBody } from './error-response.js';
import { answerError } from './answer-error.js';
import './fastify-types.js';
import { generateRequestId } from './request-id.js';
import { nodeServer } from './node-server.js';
import { registerPipeline } from './pipeline.js';
import type { RequestGate } from './request-gate.js';
import { handleClientError } from './client-error.js';
import { parseJsonBody } from './json-body.js';
import { noteRequestedModel } from './requested-model.js';
import { contentEncodingError, decodeRequestBody } from './request-body-encoding.js';
import type { PausedStreams } from './paused-streams.js';
import { registerChatCompletionsRoute } from './routes/chat-completions-route.js';
import { registerMessagesRoutes } from './routes/messages-route.js';
import { registerResponsesRoute } from './routes/responses-route.js';
import { registerNativeResponsesRoute } from './routes/native-responses-route.js';
import { registerEmbeddingsRoute } from './routes/embeddings-route.js';
import { registerRerankRoute } from './routes/rerank-route.js';
import { registerSpeechRoute } from './routes/speech-route.js';
import { registerTranscriptionsRoute } from './routes/transcriptions-route.js';
import { registerHealthRoute, registerReadyRoute, type Readiness } from './routes/health-route.js';
import { registerMetricsRoute, type MetricsExposition } from './routes/metrics-route.js';
import { registerModelsRoutes } from './routes/models-route.js';
import { registerAdminRoutes } from './routes/admin-routes.js';
import { registerConsoleRoute } from './routes/console-route.js';
import { registerConsoleSessionRoutes, type DescribeToken } from './routes/console-session-routes.js';
import type { ConsoleGate } from './console-gate.js';
import type { ConsoleSessions } from '../access/index.js';
import { echo, GatewayError } from '../errors/index.js';

export interface AppServices {
  logger: Logger;
  authenticator: TokenAuthenticator;
  recorder: RequestRecorder;
  catalog: ModelCatalog;
  chat: ChatCompletionService;
  /** `/v1/responses`: the Responses API over every chat model. */
  responses: ResponsesService;
  /** `/v1/messages`: Anthropic's Messages API over every chat model. */
  messages: MessagesService;
  native: NativeService;
  embeddings: EmbeddingService;
  reranker: RerankService;
  speech: SpeechService;
  transcriptions: TranscriptionService;
  /** The admin API (`/admin/v1`, scope `admin`): its route table, made by the composition root. */
  adminRoutes: readonly AdminRoute[];
  /** The web console (docs/console.md); null when `console.enabled` is false. */
  console: ConsoleServices | null;
  /** Made by the composition root, which also answers what is pending at the shutdown deadline. */
  gate: RequestGate;
  /** Bounds on streams whose clients stopped reading. */
  pausedStreams: PausedStreams;
  /** Bounds on how long and how much a client may hold, per docs/reliability.md. */
  limits: EdgeLimits;
  /** What `/health` adds to its `status` (the shared state's breaker, with Redis); absent: nothing. */
  healthDetail?: () => Readonly<Record<string, unknown>>;
  /** What `/ready` answers (the database, the shared state, draining); absent: ready while not draining. */
  readiness?: () => Promise<Readiness>;
  /** `GET /metrics` for a token with the `metrics` scope; absent when `metrics.enabled` is false. */
  metrics?: MetricsExposition;
}

export interface ConsoleServices {
  gate: ConsoleGate;
  sessions: ConsoleSessions;
  describeToken: DescribeToken;
  /** The built app's folder (`dist/web`); null when it has not been built. */
  root: string | null;
}

export interface EdgeLimits {
  bodyLimitBytes: number;
  bodyTimeoutMs: number;
  maxConnections: number;
  maxConnectionsPerClient: number;
  headerTimeoutMs: number;
  corsOrigins: readonly string[];
  /** `server.trusted_proxies`: exempt from the per-client connection share. */
  trustedProxies: TrustedProxies;
}

/** The HTTP edge: parse, authenticate, call a service, map the result. No business logic lives here. */
export function buildApp(services: AppServices): FastifyInstance {
  const { gate, limits } = services;
  const app = Fastify({
    loggerInstance: services.logger,
    // The request log table is the access log; per-request log lines would only cost CPU.
    logController: new LogController({ disableRequestLogging: true }),
    // Fastify would make a child logger per request, and pino's redaction makes each one costly;
    // the few lines logged per request carry `requestId` themselves.
    childLoggerFactory: (logger) => logger,
    bodyLimit: limits.bodyLimitBytes,
    genReqId: generateRequestId,
    requestIdHeader: false,
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    // Connection-level concerns (CORS preflights, the body's silence timer, the connection caps, the head's timeout).
    serverFactory: nodeServer({ gate, ...limits }, services.logger),
    clientErrorHandler: handleClientError,
  }) as unknown as FastifyInstance;

  // Only JSON is accepted; without this, text/plain bodies would reach the handlers as strings.
  app.removeContentTypeParser('text/plain');
  // One JSON parser for every route (nesting depth, prototype keys, compressed bodies).
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const contentEncoding = request.headers['content-encoding'];
    const encodingError = contentEncodingError(contentEncoding);
    if (encodingError !== null) return done(encodingError, undefined);
    decodeRequestBody(body as Buffer, contentEncoding, limits.bodyLimitBytes, (error, decoded) => {
      if (error !== null) return done(error, undefined);
      let parsed: unknown;
      try {
        parsed = parseJsonBody(decoded);
      } catch (parseError) {
        return done(parseError as Error, undefined);
      }
      noteRequestedModel(request.record, parsed);
      done(null, parsed);
    });
  });
  registerPipeline(app, gate, services.console?.gate ?? null);
  registerHealthRoute(app, services.healthDetail);
  registerReadyRoute(app, services.readiness ?? (async () => (gate.draining ? 'draining' : 'ready')));
  if (services.metrics !== undefined) registerMetricsRoute(app, services.metrics);
  registerModelsRoutes(app, services.catalog);
  registerAdminRoutes(app, services.adminRoutes);
  if (services.console !== null) {
    registerConsoleSessionRoutes(app, services.console.sessions, services.console.describeToken, services.console.gate);
    registerConsoleRoute(app, services.console.root);
  }
  registerChatCompletionsRoute(app, services.chat, services.pausedStreams);
  registerResponsesRoute(app, services.responses, services.pausedStreams);
  registerMessagesRoutes(app, services.messages, services.pausedStreams, limits.bodyLimitBytes);
  registerNativeResponsesRoute(app, services.native, services.pausedStreams, limits.bodyLimitBytes);
  registerEmbeddingsRoute(app, services.embeddings);
  registerRerankRoute(app, services.reranker);
  registerSpeechRoute(app, services.speech, services.pausedStreams);
  // Multipart bodies are read part by part by the route that takes them (uploads go to disk). The
  // plugin adds async hooks to every request of the scope it is registered in, so it gets a scope
  // of its own: the JSON routes, chat above all, do not pay for them.
  void app.register(async (uploads) => {
    await uploads.register(fastifyMultipart, { throwFileSizeLimit: false });
    registerTranscriptionsRoute(uploads, services.transcriptions, services.pausedStreams);
  });

  app.setNotFoundHandler((request, reply) => {
    const error = new GatewayError('route_not_found', `No route for ${request.method} ${echo(request.url.split('?')[0] ?? '')}.`);
    reply.code(error.status).send(errorBody(error));
  });

  app.setErrorHandler((rawError, request, reply) => answerError(rawError, request, reply));

  return app;
}
