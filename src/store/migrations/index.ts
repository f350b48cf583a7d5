import type { Migration } from 'kysely';
import * as initial from './0001-initial.js';
import * as requestLogKeys from './0002-request-log-keys.js';
import * as requestLogLoggedAt from './0003-request-log-logged-at.js';
import * as requestLogRouting from './0004-request-log-routing.js';
import * as requestLogTokenDetails from './0005-request-log-token-details.js';
import * as upstreamAccounts from './0006-upstream-accounts.js';
import * as teamsAndProjects from './0007-teams-and-projects.js';
import * as limitsAndCosts from './0008-limits-and-costs.js';
import * as requestLogIndexes from './0009-request-log-indexes.js';
import * as requestLogClientAddress from './0010-request-log-client-address.js';
import * as requestLogUpstreamModel from './0011-request-log-upstream-model.js';
import * as schemaHistory from './0012-schema-history.js';
import * as requestLogWorker from './0013-request-log-worker.js';
import * as requestUsageHourly from './0014-request-usage-hourly.js';
import * as requestLogPartitions from './0015-request-log-partitions.js';
import * as requestUsageSummary from './0016-request-usage-summary.js';
import * as requestLogCacheWrites from './0017-request-log-cache-writes.js';

/**
 * Migrations are compiled into the build, not discovered on disk, so a bundled install still has
 * them. They run through store/schema-migrations.ts, which tells and records each one.
 */
export const MIGRATIONS: Readonly<Record<string, Migration>> = {
  '0001-initial': initial,
  '0002-request-log-keys': requestLogKeys,
  '0003-request-log-logged-at': requestLogLoggedAt,
  '0004-request-log-routing': requestLogRouting,
  '0005-request-log-token-details': requestLogTokenDetails,
  '0006-upstream-accounts': upstreamAccounts,
  '0007-teams-and-projects': teamsAndProjects,
  '0008-limits-and-costs': limitsAndCosts,
  '0009-request-log-indexes': requestLogIndexes,
  '0010-request-log-client-address': requestLogClientAddress,
  '0011-request-log-upstream-model': requestLogUpstreamModel,
  '0012-schema-history': schemaHistory,
  '0013-request-log-worker': requestLogWorker,
  '0014-request-usage-hourly': requestUsageHourly,
  '0015-request-log-partitions': requestLogPartitions,
  '0016-request-usage-summary': requestUsageSummary,
  '0017-request-log-cache-writes': requestLogCacheWrites,
};
