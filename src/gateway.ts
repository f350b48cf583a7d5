import { setTimeout as delay } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { CallerLimits, ConsoleSessions, quotaHolders, TeamService, TokenAuthenticator, TokenService, type CallerLimitsOptions } from './access/index.js';
import {
  ACCOUNT_PROVIDERS,
  CredentialAdmin,
  credentialRoutes,
  RequestQueries,
  requestRoutes,
  teamRoutes,
  tokenRoutes,
  UpstreamAccounts,
  withOpenApi,
  type AccountDocumentCheck,
  type AdministeredCredential,
  type AdminRoute,
} from './admin/index.js';
import { ConfigError, configChanges, reloadedConfig, type ConfigChanges, type SwitchyardConfig } from './config/index.js';
import { RuntimeAccounts } from './gateway-accounts.js';
import { accountContext, createEndpoints, type Endpoints } from './gateway-endpoints.js';
import { buildApp, type ConsoleServices } from './http/app.js';
import { ConsoleGate } from './http/console-gate.js';
import { PausedStreams } from './http/paused-streams.js';
import { RequestGate } from './http/request-gate.js';
import { accessLog } from './observability/access-log.js';
import { GatewayMetrics, type CredentialGauges, type MetricJson, type QuotaGauge } from './observability/metrics.js';
import { StateOutageLog } from './observability/state-outage-log.js';
import { startMetricsListener, type MetricsListener } from './observability/metrics-listener.js';
import { readinessCheck } from './gateway-readiness.js';
import { startRequestLogRetention, startUsageSummaries } from './gateway-retention.js';
import { GatewayTracing } from './observability/tracing.js';
import { LogThrottle } from './observability/log-throttle.js';
import { createLogger, logOutput, type LogOutput, type Logger } from './observability/logger.js';
import { logMigrations } from './observability/migration-log.js';
import type { OffModel } from './providers/provider-adapter.js';
import { hostname } from 'node:os';
import { isDeepStrictEqual } from 'node:util';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import {
  buildCatalog,
  CREDENTIAL_STATES,
  CredentialHealth,
  InFlight,
  ModelCatalog,
  Router,
  SessionBindings,
  SharedRoutingState,
  withPublishedModels,
  type SharedRoutingStateOptions,
} from './routing/index.js';
import { parseDuration, releaseVersion, SecretBox, TrustedProxies } from './core/index.js';
import { openState, RequestPathState, StateUnavailableError, type SharedState } from './state/index.js';
import {
  ChatCompletionService,
  EmbeddingService,
  NativeService,
  RerankService,
  MessagesService,
  ResponsesService,
  ResponseStore,
  SpeechService,
  TranscriptionService,
} from './services/index.js';
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
  /** The callers' rate limits and quotas, as counted now. */
  readonly limits: CallerLimits;
  /** Teams and projects, changed as the admin API and the CLI change them. */
  readonly teams: TeamService;
  /** The admin API's route table (what `/admin/v1/openapi.json` documents). */
  readonly adminRoutes: readonly AdminRoute[];
  /** The upstream credentials' states, as the admin API shows and changes them. */
  readonly credentials: CredentialAdmin;
  /** Accounts added at run time (`credentials add-codex`, `POST /admin/v1/credentials`). */
  readonly accounts: UpstreamAccounts;
  /** Where the web console is, e.g. `http://127.0.0.1:8080/console/`; null when it is off or not built. */
  readonly consoleUrl: string | null;
  /** The address it listens on, e.g. `http://127.0.0.1:8080`. */
  readonly url: string;
  /** Where `metrics.listen` serves `/metrics` without authentication, e.g. `http://127.0.0.1:9464`; null when unset or metrics are off. */
  readonly metricsUrl: string | null;
  /**
   * Applies what a reload may change of `next` (upstreams, models, the log level; see
   * `configChanges`) in one step, and says what changed. Throws, changing nothing, when the new
   * upstreams or models cannot be wired; the running config keeps serving.
   */
  reload(next: SwitchyardConfig): Promise<ConfigChanges>;
  /** Opens `logging.file` again (logrotate moved it); nothing to do when the logs go to stdout or to a logger given at start. */
  reopenLogs(): void;
  /**
   * Stops accepting connections, lets in-flight requests and streams finish (cut off after
   * `server.shutdown_timeout_ms`), writes every queued request log row, and releases everything.
   */
  shutdown(): Promise<void>;
}

export interface StartOptions {
  logger?: Logger;
  /** This process is worker `number` of `serve --workers` (docs/workers.md). */
  worker?: WorkerRole;
}

export interface WorkerRole {
  /** 1 to N, kept by a worker that the primary restarts; on every log line as `worker`. */
  readonly number: number;
  /** Whether every worker of the host listens, as the primary last said. */
  peersListening(): boolean;
  /** Answers the primary's requests for this worker's metrics with these. */
  shareMetrics(metrics: { json(): AsyncIterable<MetricJson> }): void;
  /** Every worker's metrics added up, from the primary: what a scrape of any worker shows. */
  clusterMetrics(): Promise<string>;
}

/** A worker's `/metrics`: every worker's added up, by the primary. */
function clusterExposition(worker: WorkerRole, metrics: GatewayMetrics): { readonly contentType: string; text(): Promise<string> } {
  return { contentType: metrics.contentType, text: () => worker.clusterMetrics() };
}

/** How the admin service checks an account document: with its provider's own parser. */
function checkAccountDocument(endpoints: Endpoints): AccountDocumentCheck {
  return (provider, text) => {
    const check = endpoints.loadedModule(provider)?.checkAccountDocument;
    if (check === undefined) throw new Error(`cannot be checked: provider ${provider} has no accounts`);
    return check(text);
  };
}

/** The composition root: the only place that knows every layer and wires them together. */
export async function startGateway(config: SwitchyardConfig, options: StartOptions = {}): Promise<Gateway> {
  const output = options.logger === undefined ? openLogOutput(config.logging.file) : null;
  const logger = options.logger ?? createLogger(config.logging.level, output?.stream, options.worker === undefined ? {} : { worker: options.worker.number });
  // Failures that repeat while the database or the shared state is away: one line per kind per interval.
  const failures = new LogThrottle(logger, config.logging.failure_interval_ms);
  const state = await openState(config.state.url, { keyPrefix: config.state.key_prefix });
  // What requests wait on: with Redis, each operation within a budget, behind a circuit breaker.
  // One warning per outage of the shared state and one line when it is back, whichever part finds out.
  const stateOutage = new StateOutageLog(logger);
  const requestPath = guardRequestPath(config, state, stateOutage);
  const requestState: SharedState = requestPath ?? state;
  let endpoints: Endpoints | null = null;
  let stores: Stores;
  try {
    endpoints = await createEndpoints(config, accountContext(state, logger, config.state.lock_lease_ms));
    stores = await openStores(config.database.url, {
      sqliteCheckpointPages: config.database.sqlite_checkpoint_pages,
      statementTimeoutMs: config.database.statement_timeout_ms,
      connectTimeoutMs: config.database.connect_timeout_ms,
      release: releaseVersion(),
      onMigration: logMigrations(logger),
      onConnectionError: (error) =>
        failures.failure('database-connection', error, {}, 'a PostgreSQL connection was lost (server restarted or unreachable); the next query opens another'),
    }).catch((error: unknown) => {
      throw new Error(`database.url: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    });
  } catch (error) {
    await endpoints?.close();
    await state.close();
    throw error;
  }
  const wired = endpoints as Endpoints;
  // Loaded now, so that an account can be checked and served when the config has none.
  for (const provider of ACCOUNT_PROVIDERS) await wired.module(provider);
  const { adapters, credentials } = wired;
  const box = config.security.secret_key === undefined ? null : SecretBox.fromText(config.security.secret_key);
  let accounts: RuntimeAccounts | null = null;
  let routingState: SharedRoutingState | null = null;
  let watcher: TokenChangeWatcher | null = null;
  let queue: RequestLogQueue | null = null;
  let metricsListener: MetricsListener | null = null;
  let activeTracing: GatewayTracing | null = null;
  try {
    const revision = await stores.tokens.readRevision();
    watcher = watchTokenChanges(stores.database, stores.tokens, revision, {
      pollIntervalMs: config.auth.change_poll_ms,
      onError: (error) => failures.failure('token-watcher', error, {}, 'token change watcher failed; retrying'),
    });
    const authenticator = new TokenAuthenticator(
      stores.tokens,
      watcher,
      config.auth.token_prefix,
      Date.now,
      () => stores.teams.listLimits(),
      (error) =>
        failures.failure('token-reload', error, {}, 'the tokens could not be read again after a change; serving those held meanwhile, retrying every second'),
    );
    await authenticator.load();
    // An allow-list may name what the catalog serves now (accounts added at run time included) or a model that is off for a reason the operator can fix.
    const knownModels = (): string[] => [
      ...[...catalog.all()].map((model) => model.id),
      ...adapters.flatMap((adapter) => adapter.offModels?.() ?? []).map((model) => model.id),
    ];
    const tokens = new TokenService(stores.tokens, config.auth.token_prefix, Date.now, () => authenticator.invalidate(), knownModels);
    const teams = new TeamService(stores.teams, Date.now, () => authenticator.invalidate());
    queue = new RequestLogQueue(stores.requestLogs, {
      batchSize: config.request_log.batch_size,
      flushIntervalMs: config.request_log.flush_interval_ms,
      maxQueue: config.request_log.max_queue,
      onError: (error, pendingRows, droppedRows) =>
        failures.failure(
          'request-log-write',
          error,
          { pendingRows, droppedRows },
          'request log write failed; rows kept for the next try, the oldest dropped past request_log.max_queue',
          'error',
        ),
      onRecovered: (droppedRows) => failures.recovered('request-log-write', { droppedRows }, 'request log writes resumed'),
    });
    // What a reload changes (configChanges): read through `running` wherever it is used after start.
    let running = config;
    let prices = modelPrices(running);
    const requestLog = queue;
    const tracing = gatewayTracing(config, logger, (id) => credentials.get(id)?.provider ?? null);
    activeTracing = tracing;
    const metrics: GatewayMetrics | null = config.metrics.enabled
      ? new GatewayMetrics(
          {
            team: config.metrics.labels.team,
            maxLabelValues: config.metrics.max_label_values,
            isModel: (id) => catalog.get(id) !== undefined,
            onCapReached: (metric, label, cap) =>
              logger.warn({ metric, label, cap }, 'a metric label reached metrics.max_label_values; its new values are counted under "other"'),
          },
          {
            credentials: () => credentialGauges(credentials, router),
            credentialStates: CREDENTIAL_STATES,
            inFlight: (): ReadonlyMap<string, { open: number; streaming: number }> => gate.openByEndpoint(),
            quotaUse: async (): Promise<QuotaGauge[]> =>
              (await limits.quotaUse(quotaHolders(authenticator.limitsOfHolders))).map(({ holder, limit, usedRatio }) => ({
                holderKind: holder.kind,
                holder: holder.match.project === undefined ? (holder.match.team as string) : `${holder.match.team as string}/${holder.match.project}`,
                limit,
                usedRatio,
              })),
            requestLogQueueRows: () => requestLog.size,
            requestLogDroppedRows: () => requestLog.dropped,
            spansDropped: () => tracing?.droppedSpans ?? 0,
          },
        )
      : null;
    const logFinished = accessLog(logger, config.logging.access);
    const recorder = new RequestRecorder(
      queue,
      (error) => logger.warn({ err: error }, 'usage estimate failed'),
      metrics === null && tracing === null
        ? logFinished
        : (entry, record) => {
            logFinished(entry, record);
            metrics?.requestFinished(entry);
            tracing?.finish(entry, record.trace);
          },
      (model) => prices.get(model),
      options.worker?.number ?? null,
    );
    const onStateError = (operation: string): void => metrics?.stateFailed(operation);
    const limits = callerLimits(requestState, state, queue, stores.requestSearch, failures, parseDuration(config.state.slot_lease) as number, {
      onStateError,
      stateOutage,
      ...(metrics === null ? {} : { onRefusal: (holderKind, limit) => metrics.limitRefused(holderKind, limit) }),
    });
    const proxies = TrustedProxies.parse(config.server.trusted_proxies);
    const gate = new RequestGate(
      authenticator,
      recorder,
      (error) => logger.error({ err: error }, 'recording a finished request failed'),
      limits,
      proxies,
      tracing,
    );
    const pausedStreams = new PausedStreams(config.server.paused_stream_timeout_ms, (credentialId) => credentials.get(credentialId)?.pool ?? null, logger);
    const catalog = new ModelCatalog([]);
    const rebuildCatalog = (): void => catalog.replaceWith(buildCatalog(withPublishedModels(running.models, credentials), credentials));
    accounts = new RuntimeAccounts({
      store: stores.upstreamAccounts,
      box,
      endpoints: wired,
      onChange: rebuildCatalog,
      logger,
      onPollError: (error) => failures.failure('accounts-poll', error, {}, 'reading the accounts added at run time failed; retrying'),
      onPollRecovered: () => failures.recovered('accounts-poll', {}, 'reading the accounts added at run time works again'),
    });
    await accounts.start();
    rebuildCatalog();
    const { router, shared } = await createRouter(
      config,
      logger,
      failures,
      state,
      requestState,
      {
        has: (id) => credentials.has(id),
        [Symbol.iterator]: () => credentials.keys(),
      },
      onStateError,
      stateOutage,
    );
    routingState = shared;
    const credentialAdmin = new CredentialAdmin(credentials, router.health, router.inFlight, router.recent);
    const runtimeAccounts = accounts;
    const configuredIds = new Set(config.upstreams.map((upstream) => upstream.id));
    const upstreamAccounts = new UpstreamAccounts(stores.upstreamAccounts, box, checkAccountDocument(wired), configuredIds, () => {
      void runtimeAccounts.sync().catch((error: unknown) => logger.warn({ err: error }, 'serving a changed account failed; the next poll retries'));
    });
    // The admin API, in one table: registered by the edge and documented at /admin/v1/openapi.json.
    const adminRoutes = withOpenApi([
      ...teamRoutes(teams),
      ...tokenRoutes(tokens, (ids) => stores.requestSearch.lastUsed(ids)),
      ...credentialRoutes(credentialAdmin, upstreamAccounts),
      ...requestRoutes(new RequestQueries(stores.requestSearch)),
    ]);
    const app = buildApp({
      logger,
      authenticator,
      recorder,
      catalog,
      chat: new ChatCompletionService(catalog, router, { inferSessions: config.routing.infer_sessions }),
      responses: new ResponsesService(catalog, router, responseStore(config, requestState, failures, onStateError), {
        inferSessions: config.routing.infer_sessions,
        onDroppedTool: ({ type, param, model }) =>
          logger.warn(
            { tool_type: type, param, model },
            `a tool of type ${type} was left out of a request converted to chat completions: the upstream cannot run it (said once per type)`,
          ),
      }),
      messages: new MessagesService(catalog, router, {
        inferSessions: config.routing.infer_sessions,
        onDropped: ({ field, model }) =>
          logger.info(
            { field, model },
            `${field} was left out of a Messages request converted to chat completions: the upstream has no equivalent, and the answer does not need it (said once per field)`,
          ),
      }),
      native: new NativeService(catalog, router),
      embeddings: new EmbeddingService(catalog, router),
      reranker: new RerankService(catalog, router),
      speech: new SpeechService(catalog, router),
      transcriptions: new TranscriptionService(catalog, router, config.defaults.transcription_model),
      adminRoutes,
      gate,
      console: consoleServices(config, requestState, authenticator, tokens, proxies),
      pausedStreams,
      limits: {
        bodyLimitBytes: config.server.body_limit_bytes,
        bodyTimeoutMs: config.server.body_timeout_ms,
        maxConnections: config.server.max_connections,
        maxConnectionsPerClient: config.server.max_connections_per_client,
        headerTimeoutMs: config.server.header_timeout_ms,
        corsOrigins: config.server.cors.allowed_origins,
        trustedProxies: proxies,
      },
      ...(requestPath === null ? {} : { healthDetail: () => ({ shared_state: describeRequestPath(requestPath) }) }),
      readiness: readinessCheck({
        draining: () => gate.draining,
        stores,
        state,
        ...(requestPath === null ? {} : { stateDeclaredDown: () => !requestPath.status().available }),
        ...(options.worker === undefined ? {} : { peersListening: () => (options.worker as WorkerRole).peersListening() }),
      }),
      ...(metrics === null ? {} : { metrics: options.worker === undefined ? metrics : clusterExposition(options.worker, metrics) }),
    });
    // One-time work of the adapters (the local word vectors) before listening: no caller waits for it.
    for (const adapter of adapters)
      await adapter.prepare?.({
        info: (message) => logger.info({ endpoint: adapter.endpoint }, message),
        warn: (message) => logger.warn({ endpoint: adapter.endpoint }, message),
      });
    await app.listen({ host: config.server.host, port: config.server.port });
    // A worker's metrics are the primary's to add up and serve on metrics.listen (serve-primary.ts).
    if (metrics !== null && options.worker !== undefined) options.worker.shareMetrics(metrics);
    else if (metrics !== null && config.metrics.listen !== undefined) {
      metricsListener = await startMetricsListener(config.metrics.listen, metrics, (error) =>
        logger.warn({ err: error }, 'collecting the metrics failed'),
      ).catch((error: unknown) => {
        throw new ConfigError('metrics.listen', `cannot listen: ${error instanceof Error ? error.message : String(error)}`);
      });
    }
    const activeMetricsListener = metricsListener;
    const address = app.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : config.server.port;
    const host = config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host;
    const activeWatcher = watcher;
    const activeRoutingState = shared;
    let reloading: Promise<unknown> = Promise.resolve();
    const reload = async (next: SwitchyardConfig): Promise<ConfigChanges> => {
      const changes = configChanges(running, next);
      const target = reloadedConfig(running, next);
      // Built aside from what serves, and swapped in one synchronous step once all of it was made.
      const staged = await wired.prepare(target.upstreams, running.upstreams);
      // Built first to refuse what cannot serve (a route to an upstream of the wrong type) before anything changes.
      buildCatalog(withPublishedModels(target.models, staged), staged);
      wired.adopt(staged);
      const previous = new Map(running.upstreams.map((upstream) => [upstream.id, upstream]));
      running = target;
      rebuildCatalog();
      // A credential refused or cooling for the entry it had (a revoked key) starts over with the new one.
      for (const upstream of running.upstreams) {
        const before = previous.get(upstream.id);
        if (before !== undefined && !isDeepStrictEqual(before, upstream)) router.health.reset(upstream.id, 'its upstreams[] entry changed (config reload)');
      }
      prices = modelPrices(running);
      configuredIds.clear();
      for (const upstream of running.upstreams) configuredIds.add(upstream.id);
      // A logger given at start (tests) did not take its level from the config, and does not now.
      if (output !== null) logger.level = running.logging.level;
      return changes;
    };
    // Old request log rows removed off the request path (docs/request-log-retention.md).
    const retention = startRequestLogRetention(config, stores, logger, options.worker?.number ?? null);
    // The usage charts' summaries made off the request path (docs/request-usage-summary.md).
    const summaries = startUsageSummaries(stores, logger, options.worker?.number ?? null);
    return {
      app,
      stores,
      catalog,
      offModels: adapters.flatMap((adapter) => adapter.offModels?.() ?? []).filter((model) => catalog.get(model.id) === undefined),
      logger,
      tokens,
      teams,
      limits,
      adminRoutes,
      credentials: credentialAdmin,
      accounts: upstreamAccounts,
      url: `http://${host}:${port}`,
      metricsUrl: activeMetricsListener?.url ?? null,
      consoleUrl: config.console.enabled && CONSOLE_ROOT !== null ? `http://${host}:${port}/console/` : null,
      // One reload at a time: two signals in a row apply the file twice, in order.
      reload: (next) => {
        const done = reloading.then(() => reload(next));
        reloading = done.catch(() => undefined);
        return done;
      },
      reopenLogs: () => output?.reopen(),
      shutdown: async () => {
        const retentionStopped = retention?.stop();
        const summariesStopped = summaries?.stop();
        await closeServer(app, gate, { drainDelayMs: config.server.drain_delay_ms, deadlineMs: config.server.shutdown_timeout_ms }, logger, () => {
          recorder.markShutdownDeadline();
          gate.answerPending();
        });
        await activeMetricsListener?.close();
        await recorder.close();
        await activeTracing?.close();
        await limits.close();
        if (queue !== null && queue.size > 0) logger.error({ lostRows: queue.size }, 'request log rows could not be written at shutdown');
        runtimeAccounts.close();
        await wired.close();
        await activeWatcher.close();
        await activeRoutingState.close();
        await requestPath?.close();
        await state.close();
        await retentionStopped;
        await summariesStopped;
        await stores.close();
      },
    };
  } catch (error) {
    await metricsListener?.close();
    await activeTracing?.close();
    await queue?.close(1).catch(() => undefined);
    accounts?.close();
    await watcher?.close();
    await routingState?.close();
    await requestPath?.close();
    await state.close();
    await stores.close();
    await wired.close();
    throw error;
  }
}

/** OpenTelemetry tracing when `tracing.otlp_endpoint` (or `otlp_traces_endpoint`, or their OTEL_* variables) names a collector; null otherwise. */
function gatewayTracing(config: SwitchyardConfig, logger: Logger, providerOf: (credentialId: string) => string | null): GatewayTracing | null {
  const { otlp_endpoint: base, otlp_traces_endpoint: full } = config.tracing;
  const tracesUrl = full ?? (base === undefined ? null : `${base.replace(/\/+$/, '')}/v1/traces`);
  if (tracesUrl === null) return null;
  return new GatewayTracing({
    tracesUrl,
    serviceName: config.tracing.service_name,
    serviceVersion: releaseVersion(),
    sampleRatio: config.tracing.sample_ratio,
    maxQueueSpans: config.tracing.max_queue_spans,
    providerOf,
    onExportFailure: (error) =>
      logger.warn(
        { err: error, tracesUrl: tracesUrl.replace(/\/\/[^@/]*@/, '//***@') },
        'trace export failed; spans are dropped while the collector does not take them (switchyard_spans_dropped_total)',
      ),
    onExportRecovered: () => logger.info('trace export works again'),
  });
}

/** Each credential as the metrics' gauges show it: its state, cooldown, requests in flight and, for an account, its quota and token. */
function* credentialGauges(credentials: ReadonlyMap<string, AdministeredCredential>, router: Router): Iterable<CredentialGauges> {
  for (const [id, entry] of credentials) {
    const status = router.health.current(id);
    const account = entry.credential?.account;
    yield {
      id,
      state: status.state,
      until: status.state === 'cooling' ? status.until : null,
      inFlight: router.inFlight.count(id),
      quotaUse: account?.quotaUse() ?? [],
      tokenExpiresAt: account?.tokenExpiresAt() ?? null,
    };
  }
}

/** Where the log lines go; a file that cannot be opened is a config error naming the key. */
function openLogOutput(file: string | undefined): LogOutput {
  try {
    return logOutput(file);
  } catch (error) {
    throw new ConfigError('logging.file', `cannot be opened: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The models' prices, by public id, for the request log's cost. */
function modelPrices(config: SwitchyardConfig): Map<string, NonNullable<SwitchyardConfig['models'][number]['price']>> {
  return new Map(config.models.flatMap((model) => (model.price === undefined ? [] : [[model.id, model.price] as const])));
}

/**
 * The built console: `dist/web` beside `dist/` (the gateway runs from `dist/`, its tests from
 * `src/`: both are one level below the package root). Null when it has not been built.
 */
const CONSOLE_ROOT = ((): string | null => {
  const root = fileURLToPath(new URL('../dist/web/', import.meta.url));
  return existsSync(`${root}index.html`) ? root : null;
})();

/** The web console's sign-ins (in the shared state) and files; null when `console.enabled` is false. */
function consoleServices(
  config: SwitchyardConfig,
  state: SharedState,
  authenticator: TokenAuthenticator,
  tokens: TokenService,
  proxies: TrustedProxies,
): ConsoleServices | null {
  if (!config.console.enabled) return null;
  const sessions = new ConsoleSessions(state, {
    idleMs: parseDuration(config.console.idle_timeout) as number,
    maxAgeMs: parseDuration(config.console.max_age) as number,
  });
  return {
    gate: new ConsoleGate(sessions, authenticator, new Set(config.console.origins), proxies),
    sessions,
    describeToken: async (tokenId) => {
      const record = await tokens.get(tokenId);
      return { id: record.id, name: record.name, team: record.team };
    },
    root: CONSOLE_ROOT,
  };
}

/** The router over the shared state: credential states, session bindings, in-flight counts, the `routing` settings. */
async function createRouter(
  config: SwitchyardConfig,
  logger: Logger,
  failures: LogThrottle,
  state: SharedState,
  requestState: SharedState,
  credentialIds: SharedRoutingStateOptions['credentialIds'],
  /** Counts a shared-state operation that failed (the metrics). */
  onStateError: (operation: string) => void,
  stateOutage: StateOutageLog,
): Promise<{ router: Router; shared: SharedRoutingState }> {
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
    onOutage: (error) => stateOutage.lost('routing', error),
    onRecovery: () => stateOutage.found('routing'),
    onError: (error) => {
      onStateError('routing_state');
      failures.failure('shared-routing-state', error, {}, 'shared routing state could not be read');
    },
  });
  const sharedState = shared;
  // Read on the request path: within the state's budget. Its timeouts and refusals are the breaker's news, told once.
  const bindings = new SessionBindings(
    requestState,
    parseDuration(routing.session_ttl) as number,
    (error) => {
      onStateError('session_bindings');
      if (!(error instanceof StateUnavailableError)) sharedState.noteFailure(error);
    },
    routing.max_sessions_per_team,
  );
  const router = new Router({ health, inFlight, bindings, maxAttempts: routing.max_attempts, queueTimeoutMs: parseDuration(routing.queue_timeout) as number });
  await shared.start();
  return { router, shared };
}

/**
 * Drains, then closes (docs/operations.md#readiness):
 * 1. for `drainDelayMs`, `/ready` answers 503 and every answer closes its connection, while
 *    requests are still served: a load balancer probing `/ready` (a Kubernetes Service removing
 *    the pod) moves away, and lets go of its kept-alive connections, before anything is refused;
 * 2. then every new request is answered 503 `shutting_down` with `Connection: close`, while the
 *    listener stays open until the requests in flight end (a client is told to go rather than
 *    finding the port closed). Then the server closes; at the deadline (`deadlineMs` after the
 *    delay) what is still open is answered or cut.
 */
async function closeServer(
  app: FastifyInstance,
  gate: RequestGate,
  timing: { drainDelayMs: number; deadlineMs: number },
  logger: Logger,
  onDeadline: () => void,
): Promise<void> {
  gate.drain();
  if (timing.drainDelayMs > 0) await delay(timing.drainDelayMs);
  let deadlineTimer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'deadline'>((resolve) => {
    deadlineTimer = setTimeout(() => resolve('deadline'), timing.deadlineMs);
  });
  gate.close();
  await Promise.race([gate.whenIdle(), deadline]);
  // server.close() drops only the connections idle at that moment; a keep-alive connection whose
  // stream ends later would otherwise stay open until the client lets go of it.
  const idleSweeper = setInterval(() => app.server.closeIdleConnections(), 50);
  const outcome = await Promise.race([app.close().then(() => 'closed' as const), deadline]);
  clearTimeout(deadlineTimer);
  clearInterval(idleSweeper);
  if (outcome === 'deadline') {
    logger.warn({ deadlineMs: timing.deadlineMs }, 'shutdown deadline reached; closing the connections still open');
    onDeadline();
    // Lets the answers onDeadline wrote leave their (corked) sockets before those are cut.
    await new Promise((resolve) => setImmediate(resolve));
    app.server.closeAllConnections();
    await app.close();
  }
}

/**
 * The callers' rate limits and quotas over the shared state. A quota counter the state lacks is
 * rebuilt from the request log, once the rows still queued for it are written.
 */
function callerLimits(
  requestState: SharedState,
  state: SharedState,
  queue: RequestLogQueue,
  requestLog: Stores['requestSearch'],
  failures: LogThrottle,
  slotLeaseMs: number,
  observers: { onStateError: (operation: string) => void; onRefusal?: CallerLimitsOptions['onRefusal']; stateOutage: StateOutageLog },
): CallerLimits {
  return new CallerLimits({
    state: requestState,
    background: state,
    slotLeaseMs,
    ...(observers.onRefusal === undefined ? {} : { onRefusal: observers.onRefusal }),
    ledger: async (match, fromMs, toMs) => {
      await queue.flush();
      return requestLog.spent({ ...match, from: fromMs, to: toMs });
    },
    onError: (error) => {
      observers.onStateError('caller_limits');
      // A timeout or a refusal of the breaker, or a failure during an outage: the outage was told once (StateOutageLog).
      if (error instanceof StateUnavailableError || observers.stateOutage.down) return;
      failures.failure(
        'caller-limits',
        error,
        {},
        'caller limits could not reach the shared state; requests are let through uncounted meanwhile, settlements retried',
      );
    },
  });
}

/**
 * With Redis, the state as requests see it: each operation within `state.request_timeout_ms`,
 * and a breaker that declares it down after failures in a row (one warning), stops requests
 * waiting on it, and says once when it answers again. Null with the memory state, which cannot be slow.
 */
function guardRequestPath(config: SwitchyardConfig, state: SharedState, outage: StateOutageLog): RequestPathState | null {
  if (config.state.url === 'memory') return null;
  return new RequestPathState(state, {
    budgetMs: config.state.request_timeout_ms,
    onDown: (error) => outage.lost('request path', error),
    onUp: () => outage.found('request path'),
  });
}

/** The breaker's state and counters, as `/health` shows them under `shared_state`. */
function describeRequestPath(requestPath: RequestPathState): Record<string, unknown> {
  const { available, downSince, outages, timeouts, failures, refused } = requestPath.status();
  return { available, down_since: downSince === null ? null : new Date(downSince).toISOString(), outages, timeouts, failures, refused };
}

/** Responses made by conversion, kept in the shared state for `responses.retention` (docs/responses-api.md). */
function responseStore(config: SwitchyardConfig, state: SharedState, failures: LogThrottle, onStateError: (operation: string) => void): ResponseStore {
  const budget = { teamBytes: config.responses.max_bytes_per_team, totalBytes: config.responses.max_bytes };
  return new ResponseStore(state, parseDuration(config.responses.retention) as number, budget, (error) => {
    onStateError('response_store');
    // While the state is declared down the breaker has said so; a single timeout loses this response, and is said.
    if (!(error instanceof StateUnavailableError && error.breakerOpen))
      failures.failure('response-store', error, {}, 'a response could not be stored; continuing it by previous_response_id will be refused');
  });
}
