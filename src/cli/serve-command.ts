import { loadConfig } from '../config/index.js';
import { startGateway } from '../gateway.js';
import { guardProcess } from '../observability/process-guard.js';
import { banner } from './banner.js';
import { ensureBootstrapToken } from './bootstrap-token.js';
import type { CliIo } from './cli-io.js';

/** Runs the gateway until SIGTERM or SIGINT, then shuts down gracefully and resolves with exit code 0. */
export async function serveCommand(options: { config?: string }, io: CliIo): Promise<number> {
  const { config, source } = loadConfig({ configPath: options.config });
  const gateway = await startGateway(config);
  guardProcess(gateway.logger);
  const bootstrap = await ensureBootstrapToken(gateway.stores.tokens, gateway.tokens);
  // The banner is for people and goes to stderr: stdout carries the JSON log lines machines read.
  // One write, so that a reader never sees it in pieces (a pipe delivers a write of this size whole).
  io.stderr(banner({ url: gateway.url, configSource: source, models: [...gateway.catalog.all()], bootstrap }).join('\n'));
  gateway.logger.info(
    { url: gateway.url, config: source ?? 'built-in defaults', database: redactUrl(config.database.url), models: [...gateway.catalog.all()].map((model) => model.id) },
    `Switchyard listening on ${gateway.url}`,
  );
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
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

function redactUrl(url: string): string {
  return url.replace(/\/\/([^:@/]+):([^@/]+)@/, '//$1:[redacted]@');
}
