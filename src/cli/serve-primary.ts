import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { TokenService } from '../access/index.js';
import { ConfigError, type SwitchyardConfig } from '../config/index.js';
import { ClusterMetrics, type MetricsWorker } from '../observability/cluster-metrics.js';
import { createLogger, logOutput } from '../observability/logger.js';
import { startMetricsListener, type MetricsListener } from '../observability/metrics-listener.js';
import { banner } from './banner.js';
import { ensureBootstrapToken } from './bootstrap-token.js';
import type { CliIo } from './cli-io.js';
import { withStores } from './cli-stores.js';
import { knownModelIds } from './known-models.js';
import { stopSignal } from './stop-signal.js';
import { isListeningMessage, isScrapeRequest, type ListeningMessage, type PeersMessage, type ScrapeAnswer } from './worker-messages.js';

const BIN = fileURLToPath(new URL('../../bin/switchyard.js', import.meta.url));
/** The environment variable that gives a worker its number. */
export const WORKER_VARIABLE = 'SWITCHYARD_WORKER';
/** A restarted worker waits 1 s, then twice as long after each death in a row, up to this. */
const MAX_RESTART_DELAY_MS = 30_000;
const FIRST_RESTART_DELAY_MS = 1_000;
/** A worker that served this long before it died starts the backoff again from its first step. */
const STEADY_MS = 60_000;

/** `server.workers` (or `--workers`) as a number of processes. */
export function workerCount(setting: number | 'auto'): number {
  return setting === 'auto' ? availableParallelism() : setting;
}

interface Slot {
  worker: Worker | null;
  listening: boolean;
  startedAt: number;
  /** Deaths in a row without a steady run between them: the next restart's backoff step. */
  deaths: number;
}

/**
 * The primary of `serve --workers N` (docs/workers.md): it migrates the database and makes the
 * bootstrap token once, before any worker opens the database, then starts N workers on the same
 * port (`node:cluster`), prints the banner once they all listen, restarts a worker that dies (after
 * 1 s, doubling up to 30 s while it keeps dying), passes SIGHUP and SIGUSR2 on, and drains every
 * worker on SIGTERM/SIGINT (a second signal stops them at once). Workers count limits and bind
 * sessions in the shared state, so memory state is refused.
 */
export async function servePrimary(
  context: { config: SwitchyardConfig; source: string | null; configPath: string | undefined; count: number },
  io: CliIo,
): Promise<number> {
  const { config, source, configPath, count } = context;
  if (config.state.url === 'memory')
    throw new ConfigError(
      'server.workers',
      `is ${count}, which needs state.url on Redis: with state.url: memory each worker would count limits, in-flight requests and sessions alone`,
    );
  const output = logOutput(config.logging.file);
  const logger = createLogger(config.logging.level, output.stream, { worker: 0 });
  const bootstrap = await withStores({ ...(configPath === undefined ? {} : { config: configPath }) }, io, (stores, common) =>
    ensureBootstrapToken(
      new TokenService(
        stores.tokens,
        common.auth.token_prefix,
        Date.now,
        async () => undefined,
        () => knownModelIds(common),
      ),
    ),
  );
  const slots = new Map<number, Slot>();
  // The workers' metrics, added up: what a scrape of any worker, or of metrics.listen here, shows.
  const metrics = config.metrics.enabled
    ? new ClusterMetrics(
        () =>
          [...slots.entries()].flatMap(([number, slot]): MetricsWorker[] =>
            slot.worker !== null && slot.listening && slot.worker.isConnected() ? [{ number, send: (message) => slot.worker?.send(message) }] : [],
          ),
        (missing) => logger.warn({ workers: missing }, `a scrape left out worker ${missing.join(', ')}: no answer within 5 s`),
      )
    : null;
  let metricsListener: MetricsListener | null = null;
  if (metrics !== null && config.metrics.listen !== undefined)
    metricsListener = await startMetricsListener(config.metrics.listen, metrics, (error) => logger.warn({ err: error }, 'collecting the metrics failed')).catch(
      (error: unknown) => {
        throw new ConfigError('metrics.listen', `cannot listen: ${error instanceof Error ? error.message : String(error)}`);
      },
    );
  cluster.setupPrimary({ exec: BIN, args: ['serve', ...(configPath === undefined ? [] : ['--config', configPath])] });
  let stopping = false;
  let announced = false;
  let failedToStart = false;
  let settle: () => void = () => undefined;
  const everyExited = new Promise<void>((resolve) => {
    settle = resolve;
  });
  const settleIfAllExited = (): void => {
    if ([...slots.values()].every((slot) => slot.worker === null)) settle();
  };
  const tellPeers = (): void => {
    const message: PeersMessage = { type: 'switchyard:peers', listening: [...slots.values()].every((slot) => slot.listening) };
    for (const slot of slots.values()) if (slot.worker?.isConnected() === true) slot.worker.send(message);
  };
  const announce = (facts: ListeningMessage): void => {
    announced = true;
    io.stderr(
      banner({
        url: facts.url,
        consoleUrl: facts.consoleUrl,
        consoleOff: facts.consoleOff,
        configSource: source,
        models: facts.models,
        offModels: facts.offModels,
        bootstrap,
        workers: count,
      }).join('\n'),
    );
    logger.info({ url: facts.url, workers: count, pid: process.pid }, `Switchyard listening on ${facts.url} with ${count} workers`);
  };
  const start = (number: number): void => {
    const slot = slots.get(number) as Slot;
    const worker = cluster.fork({ [WORKER_VARIABLE]: String(number) });
    slot.worker = worker;
    slot.startedAt = Date.now();
    worker.on('message', (message: unknown) => {
      if (isScrapeRequest(message)) {
        const answer = (fields: Pick<ScrapeAnswer, 'text' | 'error'>): void => {
          if (worker.isConnected()) worker.send({ type: 'switchyard:metrics-text', id: message.id, ...fields } satisfies ScrapeAnswer);
        };
        if (metrics === null) answer({ error: 'metrics are off' });
        else
          metrics.text().then(
            (text) => answer({ text }),
            (error: unknown) => answer({ error: error instanceof Error ? error.message : String(error) }),
          );
        return;
      }
      metrics?.received(number, message);
      if (!isListeningMessage(message)) return;
      slot.listening = true;
      if (!announced && [...slots.values()].every((each) => each.listening)) announce(message);
      tellPeers();
    });
    worker.on('exit', (code, signal) => {
      slot.worker = null;
      slot.listening = false;
      if (stopping || failedToStart) return settleIfAllExited();
      tellPeers();
      if (!announced) {
        // A worker that cannot start (a port in use, a bad credential file) would fail again: stop.
        failedToStart = true;
        logger.error(
          { exitedWorker: number, code, signal },
          `worker ${number} exited (${signal ?? `code ${code}`}) before every worker listened; its log lines say why`,
        );
        stopAll('SIGTERM');
        return settleIfAllExited();
      }
      slot.deaths = Date.now() - slot.startedAt >= STEADY_MS ? 1 : slot.deaths + 1;
      const delay = Math.min(MAX_RESTART_DELAY_MS, FIRST_RESTART_DELAY_MS * 2 ** (slot.deaths - 1));
      logger.warn(
        { exitedWorker: number, code, signal, restartInMs: delay },
        `worker ${number} exited (${signal ?? `code ${code}`}); restarting it in ${delay} ms`,
      );
      setTimeout(() => {
        if (!stopping) start(number);
      }, delay).unref();
    });
  };
  const stopAll = (signal: NodeJS.Signals): void => {
    for (const slot of slots.values()) slot.worker?.process.kill(signal);
  };
  for (let number = 1; number <= count; number++) {
    slots.set(number, { worker: null, listening: false, startedAt: 0, deaths: 0 });
    start(number);
  }
  process.on('SIGHUP', () => {
    output.reopen();
    stopAll('SIGHUP');
  });
  process.on('SIGUSR2', () => {
    output.reopen();
    stopAll('SIGUSR2');
  });
  const signal = await Promise.race([
    stopSignal(() => {
      logger.warn('second stop signal: stopping every worker at once');
      stopAll('SIGKILL');
      process.exit(130);
    }),
    everyExited.then(() => null),
  ]);
  if (signal === null) {
    await metricsListener?.close();
    return 1;
  }
  stopping = true;
  logger.info({ signal, workers: count }, 'shutting down: every worker stops taking connections and finishes its requests');
  stopAll('SIGTERM');
  settleIfAllExited();
  await everyExited;
  await metricsListener?.close();
  logger.info('shutdown complete');
  return 0;
}
