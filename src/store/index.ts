import { openDatabase, type Database, type OpenDatabaseOptions } from './open-database.js';
import { KyselyRequestLogSearch, type RequestLogSearch } from './request-log-search.js';
import { KyselyRequestLogStore, type RequestLogStore } from './request-log-store.js';
import { KyselyTeamStore, type TeamStore } from './team-store.js';
import { KyselyTokenStore, type TokenStore } from './token-store.js';
import { KyselyUpstreamAccountStore, type UpstreamAccountStore } from './upstream-account-store.js';

export interface Stores {
  readonly database: Database;
  readonly tokens: TokenStore;
  readonly requestLogs: RequestLogStore;
  /** The admin API's reads of the request log (filters, pages, sessions, usage). */
  readonly requestSearch: RequestLogSearch;
  readonly upstreamAccounts: UpstreamAccountStore;
  readonly teams: TeamStore;
  close(): Promise<void>;
}

/** Opens the database named by `url`, applies migrations, and returns one store per concern. */
export async function openStores(url: string, options: OpenDatabaseOptions = {}): Promise<Stores> {
  const database = await openDatabase(url, options);
  return {
    database,
    tokens: new KyselyTokenStore(database.db, database.dialect),
    requestLogs: new KyselyRequestLogStore(database),
    requestSearch: new KyselyRequestLogSearch(database.db),
    upstreamAccounts: new KyselyUpstreamAccountStore(database.db),
    teams: new KyselyTeamStore(database.db, database.dialect),
    close: () => database.close(),
  };
}

export type { Database, DialectName, OpenDatabaseOptions } from './open-database.js';
export { inspectMigrations } from './open-database.js';
export { NewerSchemaError, knownMigrations, type AppliedMigration, type MigrationEvent, type MigrationStatus } from './schema-migrations.js';
export type { RequestLogSearch, RequestSearchFilter, UsageGroup, UsageQuery, UsageRow } from './request-log-search.js';
export type { LoggedAttempt, RequestLogEntry, RequestLogQuery, RequestLogStore, StoredRequestLogEntry, UsageSource } from './request-log-store.js';
export type { TokenChanges, TokenPage, TokenRecord, TokenStore } from './token-store.js';
export { watchTokenChanges, type TokenChangeWatcher } from './token-change-watcher.js';
export type { UpstreamAccountRecord, UpstreamAccountStore } from './upstream-account-store.js';
export type { IdPage, LimitChanges, Limits, ProjectRecord, TeamChanges, TeamRecord, TeamStore } from './team-store.js';
export { backupSqlite, type SqliteBackup } from './sqlite-backup.js';
export {
  scheduleUsageSummaries,
  usageSummarizer,
  type SummaryPass,
  type SummarySchedule,
  type SummaryScheduleOptions,
  type UsageSummarizer,
} from './request-usage-summary.js';
export {
  requestLogRetention,
  rowsRemoved,
  scheduleRetention,
  vacuumSqlite,
  type RequestLogRetention,
  type RetentionOptions,
  type RetentionPass,
  type RetentionSchedule,
  type RetentionScheduleOptions,
} from './request-log-retention.js';
