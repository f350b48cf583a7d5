import type { Kysely } from 'kysely';

/**
 * Which release applied each migration (its package version), so that an older release that
 * finds migrations it does not know can name the release that wrote them and say how to roll
 * back. Rows are written by the migration runner after each run (store/schema-migrations.ts):
 * migrations applied before this table existed have none.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('switchyard_schema_history')
    .addColumn('migration', 'varchar(255)', (column) => column.primaryKey())
    .addColumn('release', 'varchar(64)', (column) => column.notNull())
    .addColumn('applied_at', 'bigint', (column) => column.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('switchyard_schema_history').execute();
}
