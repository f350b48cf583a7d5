import SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type MigrationProvider } from 'kysely';
import pg from 'pg';
import type { DatabaseSchema } from '../../src/store/database-schema.js';
import type { RequestLogEntry } from '../../src/store/index.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';

/** The database as an earlier release left it: every migration before `first` (a migration's name, or its number). */
export async function migrateUpTo(url: string, first: string): Promise<Kysely<DatabaseSchema>> {
  const sqlite = url.startsWith('sqlite:') ? new SqliteDatabase(url.slice('sqlite:'.length)) : null;
  sqlite?.pragma('journal_mode = WAL');
  const db = new Kysely<DatabaseSchema>({
    dialect: sqlite === null ? new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 2 }) }) : new SqliteDialect({ database: sqlite }),
  });
  const migrationTableSchema = sqlite === null ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema : undefined;
  const before: MigrationProvider = {
    getMigrations: async () => Object.fromEntries(Object.entries(MIGRATIONS).filter(([name]) => name < first)),
  };
  const { error } = await new Migrator({ db, provider: before, ...(migrationTableSchema === undefined ? {} : { migrationTableSchema }) }).migrateToLatest();
  if (error !== undefined) throw error;
  return db;
}

/** Rows written as the releases before the rollup (0014) wrote them: no rollup beside them. */
export async function insertUnrolled(db: Kysely<DatabaseSchema>, rows: readonly RequestLogEntry[]): Promise<void> {
  await db
    .insertInto('request_logs')
    .values(
      rows.map((row) => ({
        id: row.id,
        created_at: row.createdAt,
        token_id: row.tokenId,
        team: row.team,
        project: row.project,
        endpoint: row.endpoint,
        model: row.model,
        upstream: row.upstream,
        upstream_model: row.upstreamModel,
        session_id: row.sessionId,
        status: row.status,
        latency_ms: row.latencyMs,
        ttfb_ms: row.ttfbMs,
        prompt_tokens: row.promptTokens,
        completion_tokens: row.completionTokens,
        usage_source: row.usageSource,
        error_code: row.errorCode,
        client_request_id: row.clientRequestId,
        logged_at: row.createdAt,
        session_source: row.sessionSource,
        affinity: row.affinity,
        attempts: JSON.stringify(row.attempts),
        cached_tokens: row.cachedTokens,
        reasoning_tokens: row.reasoningTokens,
        cost_usd: row.costUsd,
        client_address: row.clientAddress,
        worker: row.worker,
      })),
    )
    .execute();
}
