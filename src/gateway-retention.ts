import { requestLogRetentionMs, type SwitchyardConfig } from './config/index.js';
import type { Logger } from './observability/logger.js';
import {
  requestLogRetention,
  rowsRemoved,
  scheduleRetention,
  scheduleUsageSummaries,
  usageSummarizer,
  type RetentionPass,
  type RetentionSchedule,
  type SummarySchedule,
  type Stores,
} from './store/index.js';

export interface RetentionTiming {
  /** PostgreSQL's partitions for the coming days are checked this soon after the start, off its path. */
  maintainAfterMs: number;
  /** The first pass: once the start's own work is done. */
  firstPassAfterMs: number;
  intervalMs: number;
}

const TIMING: RetentionTiming = { maintainAfterMs: 1_000, firstPassAfterMs: 60_000, intervalMs: 3_600_000 };

/**
 * The request log's retention in this process (docs/request-log-retention.md): a pass a minute
 * after the start, then hourly, on unref'd timers, never on a request's path; one info line per
 * pass, a warning when one fails (the next tries again). Under `serve --workers` only worker 1
 * runs them (on PostgreSQL replicas take turns through an advisory lock). Null when there is
 * nothing to do: `forever` on SQLite (PostgreSQL still makes the coming days' partitions).
 */
export function startRequestLogRetention(
  config: Pick<SwitchyardConfig, 'request_log'>,
  stores: Stores,
  logger: Logger,
  worker: number | null,
  timing: RetentionTiming = TIMING,
): RetentionSchedule | null {
  if (worker !== null && worker !== 1) return null;
  const retention = config.request_log.retention.trim();
  const retentionMs = requestLogRetentionMs(retention);
  if (retentionMs === null && stores.database.dialect === 'sqlite') return null;
  return scheduleRetention(requestLogRetention(stores.database, { retentionMs }), {
    ...timing,
    onPass: (pass, kind) => {
      // Maintenance is said only when it did something; a pass always.
      if (kind === 'maintenance' && pass.partitionsCreated.length === 0 && pass.partitionsDeferred.length === 0) return;
      const fields = passFields(pass, retention);
      if (pass.partitionsDeferred.length > 0) logger.warn(fields, `request log ${kind}: partitions left for the next pass`);
      if (kind === 'maintenance') logger.info(fields, 'request log partitions made for the coming days');
      else logger.info(fields, passMessage(pass));
    },
    onError: (error, kind) => logger.warn({ err: error }, `request log retention ${kind} failed; the next pass tries again`),
  });
}

export interface SummaryTiming {
  firstPassAfterMs: number;
  intervalMs: number;
}

const SUMMARY_TIMING: SummaryTiming = { firstPassAfterMs: 5_000, intervalMs: 60_000 };

/** A pass that summed a day's hours or more is a catch-up worth an info line; the hourly ones are debug. */
const CATCH_UP_HOURS = 24;

/**
 * The usage summary's passes in this process (docs/request-usage-summary.md): a few seconds after
 * the start (after an upgrade, every hour already logged is summed then, off the request path),
 * then every minute. Under `serve --workers` only worker 1 runs them; on PostgreSQL the other
 * replicas' passes find the lock taken and wait for their next turn.
 */
export function startUsageSummaries(stores: Stores, logger: Logger, worker: number | null, timing: SummaryTiming = SUMMARY_TIMING): SummarySchedule | null {
  if (worker !== null && worker !== 1) return null;
  return scheduleUsageSummaries(usageSummarizer(stores.database), {
    firstAfterMs: timing.firstPassAfterMs,
    intervalMs: timing.intervalMs,
    onPass: (pass) => {
      const fields = { hours: pass.hours, complete: pass.complete, duration_ms: Math.round(pass.durationMs) };
      const message = `usage summary pass: ${pass.hours} hours summed`;
      if (pass.hours >= CATCH_UP_HOURS) logger.info(fields, message);
      else if (pass.hours > 0) logger.debug(fields, message);
    },
    onError: (error) => logger.warn({ err: error }, 'usage summary pass failed; the next tries again'),
  });
}

function passMessage(pass: RetentionPass): string {
  if (pass.skipped === 'forever') return 'request log retention pass: retention is forever, nothing removed';
  if (pass.skipped === 'busy') return 'request log retention pass skipped: another process is running one';
  return `request log retention pass: removed ${rowsRemoved(pass)} rows in ${Math.round(pass.durationMs)} ms${pass.complete ? '' : ' (stopped before the end)'}`;
}

function passFields(pass: RetentionPass, retention: string): Record<string, unknown> {
  return {
    retention,
    cutoff: pass.cutoff === null ? null : new Date(pass.cutoff).toISOString(),
    rows_removed: rowsRemoved(pass),
    rows_deleted: pass.rowsDeleted,
    partitions_dropped: pass.partitionsDropped,
    partitions_created: pass.partitionsCreated,
    partitions_deferred: pass.partitionsDeferred,
    pages_freed: pass.pagesFreed,
    complete: pass.complete,
    duration_ms: Math.round(pass.durationMs),
  };
}
