import { rmSync, readFileSync, writeFileSync } from 'node:fs';
import { ConfigError, loadConfig } from '../config/index.js';
import { startGateway } from '../gateway.js';
import { guardProcess } from '../observability/process-guard.js';
import { banner } from './banner.js';
import { ensureBootstrapToken } from './bootstrap-token.js';
import { CliFailure, redactUrl, type CliIo } from './cli-io.js';
import { reloadConfig } from './reload-config.js';

/**
 * A stop signal this soon after the first is the same request, not an operator's second one: a
 * Ctrl-C under `npm start` reaches the gateway twice, from the terminal and forwarded by npm.
 */
const SAME_REQUEST_MS = 1_000;

/**
 * Runs the gateway until SIGTERM or SIGINT, then shuts down gracefully and resolves with exit code 0;
 * a second SIGTERM/SIGINT while it drains exits at once (130). SIGHUP reopens the log file and
 * reloads the config; SIGUSR2 only reopens the log file (docs/operations.md).
 */
export async function serveCommand(options: { config?: string }, io: CliIo): Promise<number> {
  const { config, source } = loadConfig({ configPath: options.config });
  const gateway = await startGateway(config).catch((error: unknown) => {
    if ((error as { code?: unknown }).code !== 'EADDRINUSE') throw error;
    throw new CliFailure(
      `${config.server.host}:${config.server.port} is already in use; choose another port with server.port in the config or SWITCHYARD_PORT (0 picks a free one)`,
      1,
    );
  });
  guardProcess(gateway.logger);
  const bootstrap = await ensureBootstrapToken(gateway.stores.tokens, gateway.tokens);
  // The banner is for people and goes to stderr: stdout carries the JSON log lines machines read.
  // One write, so that a reader never sees it in pieces (a pipe delivers a write of this size whole).
  io.stderr(
    banner({
      url: gateway.url,
      consoleUrl: gateway.consoleUrl,
      consoleOff: config.console.enabled ? 'not built: run `npm run build`, then restart' : 'off (console.enabled: false)',
      configSource: source,
      models: [...gateway.catalog.all()],
      offModels: gateway.offModels,
      bootstrap,
    }).join('\n'),
  );
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
  // Written once every signal has its handler: what reads it may signal at once.
  const pidFile = config.server.pid_file;
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

/**
 * Resolves with the first SIGTERM or SIGINT; a later one calls `now` (the operator gave up
 * waiting). The listeners stay for the process's life, so that a signal is never left to Node's
 * default, which would end the process mid-drain.
 */
function stopSignal(now: () => void): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    let firstAt: number | null = null;
    const onSignal = (signal: NodeJS.Signals): void => {
      if (firstAt === null) {
        firstAt = Date.now();
        resolve(signal);
      } else if (Date.now() - firstAt >= SAME_REQUEST_MS) now();
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    // Under `npm start` the gateway runs below npm, which passes SIGTERM and SIGINT on (the start
    // script execs the gateway) but dies of SIGHUP or SIGKILL; the gateway would be orphaned,
    // still serving with nothing supervising it. Losing that parent means the same as SIGTERM.
    if (process.env['npm_lifecycle_event'] === 'start') onParentExit(() => firstAt === null && onSignal('SIGTERM'));
  });
}

/** Removes the pid file when it is still this process's (another gateway may have started since). */
function removePidFile(path: string): void {
  try {
    if (readFileSync(path, 'utf8').trim() === String(process.pid)) rmSync(path);
  } catch {
    // Gone already: nothing to remove.
  }
}

/** Calls `then` once this process's parent has gone (it is re-parented), checking twice a second. */
function onParentExit(then: () => void): void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    then();
  }, 500);
  timer.unref();
}
