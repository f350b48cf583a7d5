import { sql, type Kysely } from 'kysely';
import { MARK_EVERY_ROLLUP_HOUR } from '../request-usage-summary.js';
import { migrationDialect } from './migration-dialect.js';

/**
 * The usage summary (docs/request-usage-summary.md): `request_usage_summary` holds the rollup
 * added up per hour and per UTC day along one dimension at a time, and `request_usage_pending` the
 * hours whose summary is behind the rollup, which the request log's batches mark. Every hour
 * already in the rollup is marked here, so that the gateway's summary pass makes their summaries
 * after the start, off its path, instead of this migration making them while the start waits; the
 * usage reads use the rollup for them meanwhile.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const sqlite = migrationDialect(db) === 'sqlite';
  await db.schema
    .createTable('request_usage_summary')
    .addColumn('period_ms', 'bigint', (column) => column.notNull())
    .addColumn('dimension', 'text', (column) => column.notNull())
    .addColumn('period_start', 'bigint', (column) => column.notNull())
    .addColumn('group_key', 'text', (column) => column.notNull())
    .addColumn('token_id', 'text')
    .addColumn('team', 'text')
    .addColumn('project', 'text')
    .addColumn('model', 'text')
    .addColumn('requests', 'bigint', (column) => column.notNull())
    .addColumn('errors', 'bigint', (column) => column.notNull())
    .addColumn('prompt_tokens', 'bigint', (column) => column.notNull())
    .addColumn('completion_tokens', 'bigint', (column) => column.notNull())
    .addColumn('cached_tokens', 'bigint', (column) => column.notNull())
    .addColumn('reasoning_tokens', 'bigint', (column) => column.notNull())
    .addColumn('cost_usd', 'double precision')
    .addPrimaryKeyConstraint('request_usage_summary_primary_key', ['period_ms', 'dimension', 'period_start', 'group_key'])
    .$call((builder) => (sqlite ? builder.modifyEnd(sql`without rowid`) : builder))
    .execute();
  await db.schema
    .createTable('request_usage_pending')
    .addColumn('hour_start', 'bigint', (column) => column.notNull())
    .addColumn('marks', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('request_usage_pending_primary_key', ['hour_start'])
    .$call((builder) => (sqlite ? builder.modifyEnd(sql`without rowid`) : builder))
    .execute();
  await sql.raw(MARK_EVERY_ROLLUP_HOUR).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('request_usage_pending').execute();
  await db.schema.dropTable('request_usage_summary').execute();
}
