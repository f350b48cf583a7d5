import { ConfigError, loadConfig, type ConfigChanges, type LoadConfigOptions } from '../config/index.js';
import { maskSecrets } from '../core/index.js';
import type { Gateway } from '../gateway.js';

/**
 * Reads the config file again as `serve` read it at start and applies it to the running gateway
 * (SIGHUP, `switchyard reload`). Logs what changed, by key and never by value; a file that cannot
 * be read, checked or wired is refused with one error line and the running config keeps serving.
 * Resolves with the changes, or null when the file was refused.
 */
export async function reloadConfig(gateway: Pick<Gateway, 'reload' | 'logger'>, options: LoadConfigOptions): Promise<ConfigChanges | null> {
  const { logger } = gateway;
  let changes: ConfigChanges;
  try {
    const { config, source } = loadConfig(options);
    changes = await gateway.reload(config);
    logger.info(
      { config: source ?? 'built-in defaults', changed: changes.applied },
      changes.applied.length === 0 ? 'config reloaded: nothing to apply' : `config reloaded: ${changes.applied.join(', ')}`,
    );
  } catch (error) {
    // A ConfigError names a key and what is wrong with it, never a value it read from the environment.
    const reason = error instanceof ConfigError ? error.message : maskSecrets(error instanceof Error ? error.message : String(error));
    logger.error({ reason }, `config reload refused, still serving the running config: ${reason}`);
    return null;
  }
  if (changes.needsRestart.length > 0) {
    logger.warn({ needs_restart: changes.needsRestart }, `config reload: needs a restart, not applied: ${changes.needsRestart.join(', ')}`);
  }
  return changes;
}
