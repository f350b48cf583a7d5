import { sql, type Kysely } from 'kysely';
import { usageGroupKeySql } from '../request-usage-rollup.js';
import { migrationDialect } from './migration-dialect.js';

/**
 * The request log's usage per UTC hour and group (token, team, project, model): requests, errors,
 * tokens and dollars. The request log's batch insert adds to it in the same transaction, so it is
 * exact, and retention leaves it alone: quotas are rebuilt from it and the usage charts read it
 * after the rows are gone (docs/request-log-retention.md). Filled here from the rows already
 * logged, in one grouped statement. `(token_id, hour_start)` and `(team, hour_start)` serve the
 * quota rebuilds and the usage filters of a token or a team.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const sqlite = migrationDialect(db) === 'sqlite';
  await db.schema
    .createTable('request_usage_hourly')
    .addColumn('hour_start', 'bigint', (column) => column.notNull())
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
    .addPrimaryKeyConstraint('request_usage_hourly_primary_key', ['hour_start', 'group_key'])
    // SQLite: the key's B-tree is the table, not an index beside a rowid table.
    .$call((builder) => (sqlite ? builder.modifyEnd(sql`without rowid`) : builder))
    .execute();
  await db.schema.createIndex('request_usage_hourly_token_index').on('request_usage_hourly').columns(['token_id', 'hour_start']).execute();
  await db.schema.createIndex('request_usage_hourly_team_index').on('request_usage_hourly').columns(['team', 'hour_start']).execute();
  const hour = sql.raw('(created_at / 3600000) * 3600000');
  await sql`
    insert into request_usage_hourly (hour_start, group_key, token_id, team, project, model, requests, errors,
      prompt_tokens, completion_tokens, cached_tokens, reasoning_tokens, cost_usd)
    select ${hour}, ${sql.raw(usageGroupKeySql())}, token_id, team, project, model, count(*),
      sum(case when status >= 400 then 1 else 0 end), coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0),
      coalesce(sum(cached_tokens), 0), coalesce(sum(reasoning_tokens), 0), sum(cost_usd)
    from request_logs
    group by ${hour}, token_id, team, project, model`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('request_usage_hourly').execute();
}
