import type { Logger } from 'pino';
import type { MigrationEvent } from '../store/index.js';

/** What a migration event says, in one line: the gateway's log message and the command line's. */
export function describeMigration(event: MigrationEvent): string {
  switch (event.kind) {
    case 'started':
      return `database migration ${event.name} (${event.position} of ${event.count}) running`;
    case 'finished':
      return `database migration ${event.name} (${event.position} of ${event.count}) done in ${milliseconds(event.durationMs)} ms`;
    case 'done':
      return event.applied.length === 0
        ? `database schema up to date (${event.latest ?? 'no migrations'})`
        : `database schema migrated: ${event.applied.length} migration${event.applied.length === 1 ? '' : 's'} applied in ${milliseconds(event.durationMs)} ms, now at ${event.latest ?? '?'}`;
  }
}

/** Each migration as it runs (a long one is seen while it runs), then a summary line, at `info`. */
export function logMigrations(logger: Logger): (event: MigrationEvent) => void {
  return (event) => {
    const fields =
      event.kind === 'done'
        ? { applied: event.applied, duration_ms: milliseconds(event.durationMs), schema: event.latest }
        : {
            migration: event.name,
            position: event.position,
            count: event.count,
            ...(event.kind === 'finished' ? { duration_ms: milliseconds(event.durationMs) } : {}),
          };
    logger.info(fields, describeMigration(event));
  };
}

function milliseconds(duration: number): number {
  return Math.round(duration);
}
