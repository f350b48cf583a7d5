import { loadCommonConfig, type CommonConfig } from '../config/index.js';
import { releaseVersion } from '../core/index.js';
import { describeMigration } from '../observability/migration-log.js';
import { openStores, type MigrationEvent, type OpenDatabaseOptions, type Stores } from '../store/index.js';
import { redactUrl, type CliIo } from './cli-io.js';

export interface ConfigOption {
  config?: string;
}

export interface StoresOptions {
  /** Also say, once, that the schema is up to date when nothing was pending (`switchyard migrate`). */
  reportUpToDate?: boolean;
}

/**
 * Opens the database the gateway would use, with the same config lookup as `serve` (but not the
 * upstreams' own keys: these commands never call an upstream, so need none of its secrets), and says on
 * stderr which one it is: a token created against one database and presented to a gateway on
 * another shows up here, while the gateway's 401 stays silent.
 */
export async function withStores<T>(
  options: ConfigOption,
  io: CliIo,
  action: (stores: Stores, config: CommonConfig) => Promise<T>,
  storesOptions: StoresOptions = {},
): Promise<T> {
  const config = commandConfig(options, io);
  const stores = await openStores(config.database.url, {
    ...databaseOptions(config),
    release: releaseVersion(),
    // Every command migrates a database it opens, as `serve` does: what runs is said on stderr.
    onMigration: (event: MigrationEvent) => {
      if (event.kind !== 'done' || event.applied.length > 0 || storesOptions.reportUpToDate === true) io.stderr(describeMigration(event));
    },
  }).catch((error: unknown) => {
    throw new Error(`database.url: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  });
  try {
    return await action(stores, config);
  } finally {
    await stores.close();
  }
}

/** The config as these commands read it, after saying on stderr which database it names. */
export function commandConfig(options: ConfigOption, io: CliIo): CommonConfig {
  const { config, source } = loadCommonConfig({ configPath: options.config });
  io.stderr(`database: ${redactUrl(config.database.url)} (config: ${source ?? 'built-in defaults'})`);
  return config;
}

/** How the gateway opens its database, from the config. */
export function databaseOptions(config: CommonConfig): OpenDatabaseOptions {
  return {
    sqliteCheckpointPages: config.database.sqlite_checkpoint_pages,
    statementTimeoutMs: config.database.statement_timeout_ms,
    connectTimeoutMs: config.database.connect_timeout_ms,
  };
}
