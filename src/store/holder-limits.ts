import type { Kysely } from 'kysely';
import type { DatabaseSchema } from './database-schema.js';
import type { Limits } from './team-store.js';

/** Every team's and project's limits (those that have any), for the token cache: two queries, whatever the number of teams. */
export async function loadHolderLimits(db: Kysely<DatabaseSchema>): Promise<{ teams: Map<string, Limits>; projects: Map<string, Limits> }> {
  const [teams, projects] = await Promise.all([
    db.selectFrom('teams').select(['id', 'limits']).where('limits', 'is not', null).execute(),
    db.selectFrom('projects').select(['team', 'id', 'limits']).where('limits', 'is not', null).execute(),
  ]);
  return {
    teams: new Map(teams.map((row) => [row.id, JSON.parse(row.limits as string) as Limits])),
    projects: new Map(projects.map((row) => [`${row.team}/${row.id}`, JSON.parse(row.limits as string) as Limits])),
  };
}
