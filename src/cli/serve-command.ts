import { loadConfig } from '../config/index.js';
import { startGateway } from '../gateway.js';
import { guardProcess } from '../observability/process-guard.js';
import { banner } from './banner.js';
import { ensureBootstrapToken } from './bootstrap-token.js';
import { CliFailure, redactUrl, type CliIo } from './cli-io.js';

/** Runs the gateway until SIGTERM or SIGINT (never SIGHUP), then shuts down gracefully and resolves with exit code 0. */
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
  io.stderr(banner({ url: gateway.url, consoleUrl: gateway.consoleUrl, consoleOff: config.console.enabled ? 'not built: run `npm run build`, then restart' : 'off (console.enabled: false)', configSource: source, models: [...gateway.catalog.all()], offModels: gateway.offModels, bootstrap }).join('\n'));
  for (const model of gateway.offModels) gateway.logger.warn({ model: model.id, reason: model.reason, remedy: model.remedy }, `${model.id} is off: ${model.reason}`);
  gateway.logger.info(
    { url: gateway.url, config: source ?? 'built-in defaults', database: redactUrl(config.database.url), models: [...gateway.catalog.all()].map((model) => model.id) },
    `Switchyard listening on ${gateway.url}`,
  );
  // SIGHUP (a terminal closing, or an operator's `kill -HUP` asking for log files to be reopened)
  // must never end the process: Node's default for it is to exit, cutting every stream and losing
  // the queued request-log rows. Log lines go to stdout only, so there is nothing to reopen yet.
  process.on('SIGHUP', () => gateway.logger.info({ signal: 'SIGHUP' }, 'SIGHUP: nothing to reopen (logs go to stdout)'));
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
    // Under `npm start` the gateway runs below npm's shell, which dies on SIGTERM without passing
    // it on; the gateway would be orphaned, still serving. Losing that parent means the same as
    // the signal.
    if (process.env['npm_lifecycle_event'] === 'start') onParentExit(() => resolve('SIGTERM'));
  });
  // A second signal while draining means "now": the operator gave up waiting.
  const forceExit = () => process.exit(130);
  process.once('SIGTERM', forceExit);
  process.once('SIGINT', forceExit);
  gateway.logger.info({ signal }, 'shutting down: no new connections, finishing in-flight requests');
  await gateway.shutdown();
  gateway.logger.info('shutdown complete');
  return 0;
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
