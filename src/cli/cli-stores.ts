import { loadCommonConfig, type CommonConfig } from '../config/index.js';
import { openStores, type Stores } from '../store/index.js';
import { redactUrl, type CliIo } from './cli-io.js';

export interface ConfigOption {
  config?: string;
}

/**
 * Opens the database the gateway would use, with the same config lookup as `serve` (but not the
 * upstreams' own keys: these commands never call an upstream, so need none of its secrets), and says on
 * stderr which one it is: a token created against one database and presented to a gateway on
 * another shows up here, while the gateway's 401 stays silent.
 */
export async function withStores<T>(options: ConfigOption, io: CliIo, action: (stores: Stores, config: CommonConfig) => Promise<T>): Promise<T> {
  const { config, source } = loadCommonConfig({ configPath: options.config });
  io.stderr(`database: ${redactUrl(config.database.url)} (config: ${source ?? 'built-in defaults'})`);
  const stores = await openStores(config.database.url, {
    sqliteCheckpointPages: config.database.sqlite_checkpoint_pages,
    statementTimeoutMs: config.database.statement_timeout_ms,
    connectTimeoutMs: config.database.connect_timeout_ms,
  }).catch((error: unknown) => {
    throw new Error(`database.url: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  });
  try {
    return await action(stores, config);
  } finally {
    await stores.close();
  }
}
