import { sql, type Kysely } from 'kysely';

/**
 * Teams and projects as records, with their limits and quotas (JSON, null for none). A team's id
 * is the name tokens have always carried (`tokens.team`), so every existing token's team and
 * project become records here, created when the database is migrated.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('teams')
    .addColumn('id', 'varchar(200)', (column) => column.primaryKey())
    .addColumn('name', 'varchar(200)', (column) => column.notNull())
    .addColumn('limits', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema
    .createTable('projects')
    .addColumn('team', 'varchar(200)', (column) => column.notNull().references('teams.id'))
    .addColumn('id', 'varchar(200)', (column) => column.notNull())
    .addColumn('name', 'varchar(200)', (column) => column.notNull())
    .addColumn('limits', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('projects_primary_key', ['team', 'id'])
    .execute();
  await sql`insert into teams (id, name, limits, created_at, updated_at) select team, team, null, min(created_at), min(created_at) from tokens group by team`.execute(
    db,
  );
  await sql`insert into projects (team, id, name, limits, created_at, updated_at) select team, project, project, null, min(created_at), min(created_at) from tokens where project is not null group by team, project`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('projects').execute();
  await db.schema.dropTable('teams').execute();
}
