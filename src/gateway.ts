import type { FastifyInstance } from 'fastify';
import { TokenAuthenticator, TokenService } from './access/index.js';
import { CredentialAdmin } from './admin/index.js';
import type { TProperties } from '@sinclair/typebox';
import { ConfigError, groupEndpoints, type SwitchyardConfig, type UpstreamConfig } from './config/index.js';
import { buildApp } from './http/app.js';
import { PausedStreams } from './http/paused-streams.js';
import { RequestGate } from './http/request-gate.js';
import { accessLog } from './observability/access-log.js';
import { createLogger, type Logger } from './observability/logger.js';
import type { AccountContext, CredentialAccount, OffModel, ProviderAdapter, ProviderModule } from './providers/provider-adapter.js';
import { PROVIDER_LOADERS } from './providers/registry.js';
import { checkUpstreamKeys } from './providers/shared/upstream-keys.js';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { buildCatalog, CredentialHealth, InFlight, Router, SessionBindings, SharedRoutingState, withPublishedModels, type CredentialEntry, type ModelCatalog } from './routing/index.js';
import { parseDuration } from './core/index.js';
import { openState, withStateLock, type SharedState } from './state/index.js';
import { ChatCompletionService, EmbeddingService, NativeService, RerankService, SpeechService, TranscriptionService } from './services/index.js';
import { openStores, watchTokenChanges, type Stores, type TokenChangeWatcher } from './store/index.js';
import { RequestLogQueue, RequestRecorder } from './usage/index.js';

export interface Gateway {
  readonly app: FastifyInstance;
  readonly stores: Stores;
  readonly catalog: ModelCatalog;
  /** Models an upstream would offer but cannot on this machine, with how to turn them on. */
  readonly offModels: readonly OffModel[];
  readonly logger: Logger;
  /** Token management whose changes this process's cache sees at once (other processes see them through the change watcher). */
  readonly tokens: TokenService;
  /** The upstream credentials' states, as the admin API shows and changes them. */
  readonly credentials: CredentialAdmin;
  /** The address it listens on, e.g. `http://127.0.0.1:8080`. */
  readonly url: string;
  /**
   * Stops accepting connections, lets in-flight requests and streams finish (cut off after
   * `server.shutdown_timeout_ms`), writes every queued request log row, and releases everything.
   */
  shutdown(): Promise<void>;
}

export interface StartOptions {
  logger?: Logger;
}

/** The composition root: the only place that knows every layer and wires them together. */
export async function startGateway(config: SwitchyardConfig, options: StartOptions = {}): Promise<Gateway> {
  const logger = options.logger ?? createLogger(config.logging.level);
  const state = await openState(config.state.url, { keyPrefix: config.state.key_prefix });
  let endpoints: Awaited<ReturnType<typeof createEndpoints>> | null = null;
  let stores: Stores;
  try {
    endpoints = await createEndpoints(config, accountContext(state, logger));
    stores = await openStores(config.database.url, { sqliteCheckpointPages: config.database.sqlite_checkpoint_pages });
  } catch (error) {
    await Promise.all((endpoints?.adapters ?? []).map((adapter) => adapter.close()));
    await state.close();
    throw error;
  }
  const { adapters, credentials } = endpoints as NonNullable<typeof endpoints>;
  let routingState: SharedRoutingState | null = null;
  let watcher: TokenChangeWatcher | null = null;
  let queue: RequestLogQueue | null = null;
  try {
    const revision = await stores.tokens.readRevision();
    watcher = watchTokenChanges(stores.database, stores.tokens, revision, {
      pollIntervalMs: config.auth.change_poll_ms,
      onError: (error) => logger.warn({ err: error }, 'token change watcher failed; retrying'),
    });
    const authenticator = new TokenAuthenticator(stores.tokens, watcher, config.auth.token_prefix);
    await authenticator.load();
    const tokens = new TokenService(stores.tokens, config.auth.token_prefix, Date.now, () => authenticator.invalidate());
    queue = new RequestLogQueue(stores.requestLogs, {
      batchSize: config.request_log.batch_size,
      flushIntervalMs: config.request_log.flush_interval_ms,
      maxQueue: config.request_log.max_queue,
      onError: (error, pendingRows, droppedRows) =>
        logger.error({ err: error, pendingRows, droppedRows }, 'request log write failed; rows kept for the next try, the oldest dropped past request_log.max_queue'),
    });
    const recorder = new RequestRecorder(queue, (error) => logger.warn({ err: error }, 'usage estimate failed'), accessLog(logger, config.logging.access));
    const gate = new RequestGate(authenticator, recorder, (error) => logger.error({ err: error }, 'recording a finished request failed'));
    const pausedStreams = new PausedStreams(config.server.paused_stream_timeout_ms, (credentialId) => credentials.get(credentialId)?.pool ?? null, logger);
    const catalog = buildCatalog(withPublishedModels(config.models, credentials), credentials);
    const { router, shared } = await createRouter(config, logger, state, [...credentials.keys()]);
    routingState = shared;
    const credentialAdmin = new CredentialAdmin(credentials, router.health, router.inFlight);
    const app = buildApp({
      logger,
      authenticator,
      recorder,
      catalog,
      chat: new ChatCompletionService(catalog, router, { inferSessions: config.routing.infer_sessions }),
      native: new NativeService(catalog, router),
      embeddings: new EmbeddingService(catalog, router),
      reranker: new RerankService(catalog, router),
      speech: new SpeechService(catalog, router),
      transcriptions: new TranscriptionService(catalog, router, config.defaults.transcription_model),
      credentials: credentialAdmin,
      gate,
      pausedStreams,
      limits: {
        bodyLimitBytes: config.server.body_limit_bytes,
        bodyTimeoutMs: config.server.body_timeout_ms,
        maxConnections: config.server.max_connections,
        corsOrigins: config.server.cors.allowed_origins,
      },
    });
    await app.listen({ host: config.server.host, port: config.server.port });
    const address = app.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : config.server.port;
    const host = config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host;
    const activeWatcher = watcher;
    const activeRoutingState = shared;
    return {
      app,
      stores,
      catalog,
      offModels: adapters.flatMap((adapter) => adapter.offModels?.() ?? []).filter((model) => catalog.get(model.id) === undefined),
      logger,
      tokens,
      credentials: credentialAdmin,
      url: `http://${host}:${port}`,
      shutdown: async () => {
        await closeServer(app, config.server.shutdown_timeout_ms, logger, () => {
          recorder.markShutdownDeadline();
          gate.answerPending();
        });
        await recorder.close();
        if (queue !== null && queue.size > 0) logger.error({ lostRows: queue.size }, 'request log rows could not be written at shutdown');
        await Promise.all(adapters.map((adapter) => adapter.close()));
        await activeWatcher.close();
        await activeRoutingState.close();
        await state.close();
        await stores.close();
      },
    };
  } catch (error) {
    await queue?.close(1).catch(() => undefined);
    await watcher?.close();
    await routingState?.close();
    await state.close();
    await stores.close();
    await Promise.all(adapters.map((adapter) => adapter.close()));
    throw error;
  }
}

/** The router over the shared state: credential states, session bindings, in-flight counts, the `routing` settings. */
async function createRouter(config: SwitchyardConfig, logger: Logger, state: SharedState, credentialIds: readonly string[]): Promise<{ router: Router; shared: SharedRoutingState }> {
  const { routing } = config;
  let shared: SharedRoutingState | null = null;
  const health = new CredentialHealth({
    maxCooldownMs: parseDuration(routing.max_cooldown) as number,
    onTransition: (transition) => {
      const { credentialId, from, to, reason, until } = transition;
      const line = { credential: credentialId, from, to, reason, until: until === null ? null : new Date(until).toISOString() };
      // Leaving service is what an operator must see; coming back is news.
      if (to === 'healthy') logger.info(line, 'credential state changed');
      else logger.warn(line, 'credential state changed');
      shared?.shareTransition(transition);
    },
  });
  const inFlight = new InFlight();
  shared = new SharedRoutingState(state, health, inFlight, {
    replicaId: `${hostname()}-${process.pid}-${randomBytes(4).toString('hex')}`,
    credentialIds,
    onOutage: (error) => logger.warn({ err: error, state: config.state.url.replace(/\/\/[^@/]*@/, '//***@') }, 'shared state unreachable; routing on with what this process knows (credential states, rendezvous choices for sessions)'),
    onRecovery: () => logger.info('shared state reachable again; credential states caught up'),
    onError: (error) => logger.warn({ err: error }, 'shared routing state could not be read'),
  });
  const sharedState = shared;
  const bindings = new SessionBindings(state, parseDuration(routing.session_ttl) as number, (error) => sharedState.noteFailure(error));
  const router = new Router({ health, inFlight, bindings, maxAttempts: routing.max_attempts, queueTimeoutMs: parseDuration(routing.queue_timeout) as number });
  await shared.start();
  return { router, shared };
}

/** A credential as the gateway wires it: its route target, and the connection pool it draws on. */
interface WiredCredential extends CredentialEntry {
  readonly pool: { readonly name: string; readonly size: number };
}

/**
 * One adapter per endpoint (entries that differ only in their credential share one, and its
 * connection pool), and each entry's credential bound to its endpoint's adapter.
 */
async function createEndpoints(config: SwitchyardConfig, context: AccountContext): Promise<{ adapters: ProviderAdapter[]; credentials: Map<string, WiredCredential> }> {
  const modules = new Map<string, ProviderModule>();
  for (const [index, upstream] of config.upstreams.entries()) {
    const load = PROVIDER_LOADERS[upstream.provider];
    if (load === undefined) {
      const available = Object.keys(PROVIDER_LOADERS).join(', ');
      throw new ConfigError(`upstreams[${index}].provider`, `provider "${upstream.provider}" is not available in this version (available: ${available})`);
    }
    const provider = modules.get(upstream.provider) ?? (await load());
    modules.set(upstream.provider, provider);
    checkOwnKeys(upstream, index, provider.upstreamKeys);
  }
  const adapters: ProviderAdapter[] = [];
  const credentials = new Map<string, WiredCredential>();
  try {
    for (const { endpoint, credentials: entries } of groupEndpoints(config.upstreams)) {
      const module = modules.get(endpoint.provider) as ProviderModule;
      const adapter = module.create(endpoint);
      adapters.push(adapter);
      const pool = { name: endpoint.name, size: endpoint.max_connections };
      for (const entry of entries) {
        const account = module.account === undefined ? undefined : await accountOf(module, entry, config.upstreams.indexOf(entry), context);
        const credential = { id: entry.id, apiKey: entry.api_key, headers: entry.headers ?? {}, ...(account === undefined ? {} : { account }) };
        credentials.set(entry.id, { credential, provider: entry.provider, adapter, pool, maxInFlight: entry.max_in_flight ?? null });
      }
    }
  } catch (error) {
    await Promise.all(adapters.map((adapter) => adapter.close()));
    throw error;
  }
  return { adapters, credentials };
}

/** An OAuth account's entry read where it says (its auth file); a problem names the entry's key. */
async function accountOf(module: ProviderModule, entry: UpstreamConfig, index: number, context: AccountContext): Promise<CredentialAccount> {
  try {
    return await (module.account as NonNullable<ProviderModule['account']>)(entry, context);
  } catch (error) {
    if (error instanceof ConfigError) throw new ConfigError(`upstreams[${index}].${error.key}`, error.problem);
    throw error;
  }
}

/** What OAuth accounts get from the gateway: a refresh lock shared through the state, and the log. */
function accountContext(state: SharedState, logger: Logger): AccountContext {
  return {
    exclusive: (name, task) => withStateLock(state, name, task),
    note: (level, fields, message) => logger[level](fields, message),
  };
}

async function closeServer(app: FastifyInstance, deadlineMs: number, logger: Logger, onDeadline: () => void): Promise<void> {
  let deadlineTimer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'deadline'>((resolve) => {
    deadlineTimer = setTimeout(() => resolve('deadline'), deadlineMs);
  });
  // server.close() drops only the connections idle at that moment; a keep-alive connection whose
  // stream ends later would otherwise stay open until the client lets go of it.
  const idleSweeper = setInterval(() => app.server.closeIdleConnections(), 50);
  const outcome = await Promise.race([app.close().then(() => 'closed' as const), deadline]);
  clearTimeout(deadlineTimer);
  clearInterval(idleSweeper);
  if (outcome === 'deadline') {
    logger.warn({ deadlineMs }, 'shutdown deadline reached; closing the connections still open');
    onDeadline();
    // Lets the answers onDeadline wrote leave their (corked) sockets before those are cut.
    await new Promise((resolve) => setImmediate(resolve));
    app.server.closeAllConnections();
    await app.close();
  }
}

/** An entry's provider-specific keys against its provider's schema; the error names the entry. */
function checkOwnKeys(upstream: UpstreamConfig, index: number, properties: TProperties): void {
  try {
    checkUpstreamKeys(upstream, properties);
  } catch (error) {
    if (error instanceof ConfigError) throw new ConfigError(`upstreams[${index}].${error.key}`, error.problem);
    throw error;
  }
}
