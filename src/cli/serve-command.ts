import cluster from 'node:cluster';
import { rmSync, readFileSync, writeFileSync } from 'node:fs';
import { ConfigError, loadConfig } from '../config/index.js';
import { startGateway, type Gateway, type WorkerRole } from '../gateway.js';
import { guardProcess } from '../observability/process-guard.js';
import { banner } from './banner.js';
import { ensureBootstrapToken } from './bootstrap-token.js';
import { CliFailure, EXIT_USAGE, redactUrl, type CliIo } from './cli-io.js';
import { reloadConfig } from './reload-config.js';
import { servePrimary, WORKER_VARIABLE, workerCount } from './serve-primary.js';
import { stopSignal } from './stop-signal.js';
import { isCollectRequest, sendMetrics } from '../observability/cluster-metrics.js';
import type { MetricJson } from '../observability/metrics.js';
import { isPeersMessage, isScrapeAnswer, type ListeningMessage, type ScrapeAnswer, type ScrapeRequest } from './worker-messages.js';

export interface ServeOptions {
  config?: string;
  /** `--workers N` or `auto`: overrides `server.workers`. */
  workers?: string;
}

const CONSOLE_NOT_BUILT = 'not built: run `npm run build`, then restart';

/**
 * Runs the gateway until SIGTERM or SIGINT, then shuts down gracefully and resolves with exit code 0;
 * a second SIGTERM/SIGINT while it drains exits at once (130). SIGHUP reopens the log file and
 * reloads the config; SIGUSR2 only reopens the log file (docs/operations.md). With more than one
 * worker this process is their primary (serve-primary.ts), and each worker runs this same command.
 */
export async function serveCommand(options: ServeOptions, io: CliIo): Promise<number> {
  if (!cluster.isWorker) return serve(options, io, undefined);
  try {
    return await serve(options, io, workerRole());
  } finally {
    // A worker's channel to its primary would keep it alive once it has stopped, or failed to
    // start. `cluster.worker.disconnect()` closes it as a worker's own decision: a bare
    // `process.disconnect()` makes Node's cluster code exit at once with 0, losing the exit code.
    if (process.connected) cluster.worker?.disconnect();
  }
}

async function serve(options: ServeOptions, io: CliIo, worker: WorkerRole | undefined): Promise<number> {
  const { config, source } = loadConfig({ configPath: options.config });
  if (worker === undefined) {
    const count = workerCount(options.workers === undefined ? config.server.workers : workersFlag(options.workers));
    if (count > 1) return servePrimary({ config, source, configPath: options.config, count }, io);
  }
  const gateway = await startGateway(config, worker === undefined ? {} : { worker }).catch((error: unknown) => {
    if ((error as { code?: unknown }).code !== 'EADDRINUSE') throw error;
    throw new CliFailure(
      `${config.server.host}:${config.server.port} is already in use; choose another port with server.port in the config or SWITCHYARD_PORT (0 picks a free one)`,
      1,
    );
  });
  guardProcess(gateway.logger);
  const consoleOff = config.console.enabled ? CONSOLE_NOT_BUILT : 'off (console.enabled: false)';
  if (worker === undefined) {
    const bootstrap = await ensureBootstrapToken(gateway.tokens);
    // The banner is for people and goes to stderr: stdout carries the JSON log lines machines read.
    // One write, so that a reader never sees it in pieces (a pipe delivers a write of this size whole).
    io.stderr(
      banner({
        url: gateway.url,
        consoleUrl: gateway.consoleUrl,
        consoleOff,
        configSource: source,
        models: [...gateway.catalog.all()],
        offModels: gateway.offModels,
        bootstrap,
      }).join('\n'),
    );
  }
  for (const model of gateway.offModels)
    gateway.logger.warn({ model: model.id, reason: model.reason, remedy: model.remedy }, `${model.id} is off: ${model.reason}`);
  gateway.logger.info(
    {
      url: gateway.url,
      config: source ?? 'built-in defaults',
      database: redactUrl(config.database.url),
      models: [...gateway.catalog.all()].map((model) => model.id),
      pid: process.pid,
    },
    `Switchyard listening on ${gateway.url}`,
  );
  // SIGHUP (an operator's `kill -HUP`, `switchyard reload`, logrotate) must never end the process,
  // which is Node's default for it: it reopens the log file and reloads the config. SIGUSR2 (also
  // fatal by default) only reopens the log file, for a logrotate that should not touch the config.
  // A worker gets both from its primary.
  const logFile = config.logging.file;
  process.on('SIGHUP', () => {
    gateway.reopenLogs();
    gateway.logger.info({ signal: 'SIGHUP' }, logFile === undefined ? 'SIGHUP: reloading the config' : 'SIGHUP: log file reopened; reloading the config');
    void reloadConfig(gateway, { configPath: options.config });
  });
  process.on('SIGUSR2', () => {
    gateway.reopenLogs();
    gateway.logger.info({ signal: 'SIGUSR2' }, logFile === undefined ? 'SIGUSR2: nothing to reopen (logs go to stdout)' : 'SIGUSR2: log file reopened');
  });
  const signal = stopSignal(() => process.exit(130));
  if (worker !== undefined) tellPrimary(gateway, consoleOff);
  // Written once every signal has its handler: what reads it may signal at once. A worker's primary writes its own.
  const pidFile = worker === undefined ? config.server.pid_file : undefined;
  if (pidFile !== undefined) {
    try {
      writeFileSync(pidFile, `${process.pid}\n`);
    } catch (error) {
      await gateway.shutdown();
      throw new ConfigError('server.pid_file', `cannot be written: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  gateway.logger.info({ signal: await signal }, 'shutting down: no new connections, finishing in-flight requests; send it again to stop at once');
  await gateway.shutdown();
  if (pidFile !== undefined) removePidFile(pidFile);
  gateway.logger.info('shutdown complete');
  return 0;
}

/** The longest a scrape of a worker waits for the primary to add every worker's metrics up. */
const CLUSTER_SCRAPE_TIMEOUT_MS = 10_000;

/** This worker's number (from its primary), what the primary says of the others, and the metrics it adds up. */
function workerRole(): WorkerRole {
  const number = Number(process.env[WORKER_VARIABLE]);
  if (!Number.isInteger(number) || number < 1) throw new Error(`a worker of serve --workers needs ${WORKER_VARIABLE}, got "${process.env[WORKER_VARIABLE]}"`);
  let listening = false;
  let shared: { json(): AsyncIterable<MetricJson> } | null = null;
  let nextScrape = 0;
  const scrapes = new Map<number, (answer: ScrapeAnswer) => void>();
  const send = (message: unknown): void => {
    if (process.connected) process.send?.(message);
  };
  process.on('message', (message: unknown) => {
    if (isPeersMessage(message)) listening = message.listening;
    else if (isCollectRequest(message) && shared !== null) void sendMetrics(message, shared.json(), send);
    else if (isScrapeAnswer(message)) scrapes.get(message.id)?.(message);
  });
  return {
    number,
    peersListening: () => listening,
    shareMetrics: (metrics) => {
      shared = metrics;
    },
    clusterMetrics: () =>
      new Promise<string>((resolve, reject) => {
        const id = nextScrape++;
        const timer = setTimeout(() => {
          scrapes.delete(id);
          reject(new Error(`the primary did not add the workers' metrics up within ${CLUSTER_SCRAPE_TIMEOUT_MS} ms`));
        }, CLUSTER_SCRAPE_TIMEOUT_MS);
        scrapes.set(id, (answer) => {
          clearTimeout(timer);
          scrapes.delete(id);
          if (answer.text === undefined) reject(new Error(answer.error ?? 'the primary gave no metrics'));
          else resolve(answer.text);
        });
        const request: ScrapeRequest = { type: 'switchyard:metrics-scrape', id };
        send(request);
      }),
  };
}

/** Tells the primary this worker listens, with what its banner shows. */
function tellPrimary(gateway: Gateway, consoleOff: string): void {
  const message: ListeningMessage = {
    type: 'switchyard:listening',
    url: gateway.url,
    consoleUrl: gateway.consoleUrl,
    consoleOff,
    models: [...gateway.catalog.all()].map((model) => ({ id: model.id, type: model.type })),
    offModels: [...gateway.offModels],
  };
  process.send?.(message);
}

/** `--workers`: a number of processes, or `auto` (one per core this process may use). */
function workersFlag(value: string): number | 'auto' {
  if (value === 'auto') return 'auto';
  const count = Number(value);
  if (!Number.isInteger(count) || count < 1 || count > 256)
    throw new CliFailure(`--workers: expected a number from 1 to 256 or auto, got "${value}"`, EXIT_USAGE);
  return count;
}

/** Removes the pid file when it is still this process's (another gateway may have started since). */
function removePidFile(path: string): void {
  try {
    if (readFileSync(path, 'utf8').trim() === String(process.pid)) rmSync(path);
  } catch {
    // Gone already: nothing to remove.
  }
}
