import type { Kysely, Selectable } from 'kysely';
import type { DatabaseSchema, ProjectsTable, TeamsTable } from './database-schema.js';
import type { DialectName } from './open-database.js';
import { bumpTokenRevision } from './token-revision.js';

/**
 * What a team, a project or a token may spend: rate limits (per minute, in flight) and quotas
 * (per UTC day, per UTC month, in all). Every one is optional; absent means no limit.
 */
export interface Limits {
  rpm?: number;
  tpm?: number;
  maxConcurrent?: number;
  tokensPerDay?: number;
  tokensPerMonth?: number;
  tokensTotal?: number;
  usdPerDay?: number;
  usdPerMonth?: number;
}

/** A change to limits, as a merge patch: a number sets that limit, null removes it, absent keeps it. */
export type LimitChanges = { [K in keyof Limits]?: number | null };

export function mergeLimits(current: Limits, changes: LimitChanges): Limits {
  const merged: Limits = { ...current };
  for (const [name, value] of Object.entries(changes) as [keyof Limits, number | null | undefined][]) {
    if (value === null) delete merged[name];
    else if (value !== undefined) merged[name] = value;
  }
  return merged;
}

export interface TeamRecord {
  id: string;
  name: string;
  limits: Limits;
  createdAt: number;
  updatedAt: number;
}

export interface ProjectRecord extends TeamRecord {
  team: string;
}

export interface TeamChanges {
  name?: string;
  /** Merged into the stored limits in the same transaction, so two concurrent changes both hold. */
  limits?: LimitChanges;
}

/** One page of a list ordered by id: at most `limit` records with an id above `after`. */
export interface IdPage {
  limit: number;
  after?: string;
}

export interface TeamStore {
  /** False when a team with this id exists already. */
  insertTeam(record: TeamRecord): Promise<boolean>;
  getTeam(id: string): Promise<TeamRecord | null>;
  /** By id; every team without a page. */
  listTeams(page?: IdPage): Promise<TeamRecord[]>;
  /** The limits of every team and project that has any, keyed by team id and by `team/project`: what the token cache carries. */
  listLimits(): Promise<{ teams: Map<string, Limits>; projects: Map<string, Limits> }>;
  /** The team as changed; null when there is none. */
  updateTeam(id: string, changes: TeamChanges, at: number): Promise<TeamRecord | null>;
  /**
   * Removes the team and its projects, unless tokens that are neither revoked nor expired at `now`
   * belong to it: then nothing is removed and their ids are returned. Null when there is no team.
   */
  deleteTeam(id: string, now: number): Promise<{ deleted: boolean; liveTokens: string[] } | null>;
  /** False when the project exists already in that team; null when the team does not exist (nothing is written). */
  insertProject(record: ProjectRecord): Promise<boolean | null>;
  getProject(team: string, id: string): Promise<ProjectRecord | null>;
  listProjects(team: string, page?: IdPage): Promise<ProjectRecord[]>;
  updateProject(team: string, id: string, changes: TeamChanges, at: number): Promise<ProjectRecord | null>;
  /** As deleteTeam, for the project's live tokens. */
  deleteProject(team: string, id: string, now: number): Promise<{ deleted: boolean; liveTokens: string[] } | null>;
}

/**
 * Teams and projects. Every write bumps the tokens' revision in its transaction: the token cache
 * carries each token's team and project limits, so it must reload when they change. On
 * PostgreSQL a team or project row is locked (FOR UPDATE) before it is changed or deleted, and a
 * token insert locks the rows it names (FOR SHARE, token-store.ts): a team cannot be deleted
 * between another transaction's check for live tokens and its new token.
 */
export class KyselyTeamStore implements TeamStore {
  constructor(
    private readonly db: Kysely<DatabaseSchema>,
    private readonly dialect: DialectName,
  ) {}

  async insertTeam(record: TeamRecord): Promise<boolean> {
    return this.db.transaction().execute(async (transaction) => {
      const result = await transaction
        .insertInto('teams')
        .values(teamRow(record))
        .onConflict((conflict) => conflict.doNothing())
        .executeTakeFirst();
      if (Number(result.numInsertedOrUpdatedRows ?? 0) === 0) return false;
      await bumpTokenRevision(transaction, this.dialect);
      return true;
    });
  }

  async getTeam(id: string): Promise<TeamRecord | null> {
    const row = await this.db.selectFrom('teams').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? null : fromTeamRow(row);
  }

  async listLimits(): Promise<{ teams: Map<string, Limits>; projects: Map<string, Limits> }> {
    const [teams, projects] = await Promise.all([
      this.db.selectFrom('teams').select(['id', 'limits']).where('limits', 'is not', null).execute(),
      this.db.selectFrom('projects').select(['team', 'id', 'limits']).where('limits', 'is not', null).execute(),
    ]);
    return {
      teams: new Map(teams.map((row) => [row.id, JSON.parse(row.limits as string) as Limits])),
      projects: new Map(projects.map((row) => [`${row.team}/${row.id}`, JSON.parse(row.limits as string) as Limits])),
    };
  }

  async listTeams(page?: IdPage): Promise<TeamRecord[]> {
    let query = this.db.selectFrom('teams').selectAll().orderBy('id');
    if (page !== undefined) {
      if (page.after !== undefined) query = query.where('id', '>', page.after);
      query = query.limit(page.limit);
    }
    return (await query.execute()).map(fromTeamRow);
  }

  async updateTeam(id: string, changes: TeamChanges, at: number): Promise<TeamRecord | null> {
    return this.db.transaction().execute(async (transaction) => {
      let query = transaction.selectFrom('teams').selectAll().where('id', '=', id);
      if (this.dialect === 'postgres') query = query.forUpdate();
      const row = await query.executeTakeFirst();
      if (row === undefined) return null;
      const changed = { ...fromTeamRow(row), ...changedFields(fromTeamRow(row), changes, at) };
      await transaction.updateTable('teams').set(teamRow(changed)).where('id', '=', id).execute();
      await bumpTokenRevision(transaction, this.dialect);
      return changed;
    });
  }

  async deleteTeam(id: string, now: number): Promise<{ deleted: boolean; liveTokens: string[] } | null> {
    return this.db.transaction().execute(async (transaction) => {
      let query = transaction.selectFrom('teams').select('id').where('id', '=', id);
      if (this.dialect === 'postgres') query = query.forUpdate();
      if ((await query.executeTakeFirst()) === undefined) return null;
      const liveTokens = await liveTokenIds(transaction, now, id, null);
      if (liveTokens.length > 0) return { deleted: false, liveTokens };
      await transaction.deleteFrom('projects').where('team', '=', id).execute();
      await transaction.deleteFrom('teams').where('id', '=', id).execute();
      await bumpTokenRevision(transaction, this.dialect);
      return { deleted: true, liveTokens: [] };
    });
  }

  async insertProject(record: ProjectRecord): Promise<boolean | null> {
    return this.db.transaction().execute(async (transaction) => {
      let team = transaction.selectFrom('teams').select('id').where('id', '=', record.team);
      // Shared: the team cannot be deleted under the new project, and other projects may be added beside it.
      if (this.dialect === 'postgres') team = team.forShare();
      if ((await team.executeTakeFirst()) === undefined) return null;
      const result = await transaction
        .insertInto('projects')
        .values({ ...teamRow(record), team: record.team })
        .onConflict((conflict) => conflict.doNothing())
        .executeTakeFirst();
      if (Number(result.numInsertedOrUpdatedRows ?? 0) === 0) return false;
      await bumpTokenRevision(transaction, this.dialect);
      return true;
    });
  }

  async getProject(team: string, id: string): Promise<ProjectRecord | null> {
    const row = await this.db.selectFrom('projects').selectAll().where('team', '=', team).where('id', '=', id).executeTakeFirst();
    return row === undefined ? null : fromProjectRow(row);
  }

  async listProjects(team: string, page?: IdPage): Promise<ProjectRecord[]> {
    let query = this.db.selectFrom('projects').selectAll().where('team', '=', team).orderBy('id');
    if (page !== undefined) {
      if (page.after !== undefined) query = query.where('id', '>', page.after);
      query = query.limit(page.limit);
    }
    return (await query.execute()).map(fromProjectRow);
  }

  async updateProject(team: string, id: string, changes: TeamChanges, at: number): Promise<ProjectRecord | null> {
    return this.db.transaction().execute(async (transaction) => {
      let query = transaction.selectFrom('projects').selectAll().where('team', '=', team).where('id', '=', id);
      if (this.dialect === 'postgres') query = query.forUpdate();
      const row = await query.executeTakeFirst();
      if (row === undefined) return null;
      const current = fromProjectRow(row);
      const changed = { ...current, ...changedFields(current, changes, at) };
      await transaction.updateTable('projects').set(teamRow(changed)).where('team', '=', team).where('id', '=', id).execute();
      await bumpTokenRevision(transaction, this.dialect);
      return changed;
    });
  }

  async deleteProject(team: string, id: string, now: number): Promise<{ deleted: boolean; liveTokens: string[] } | null> {
    return this.db.transaction().execute(async (transaction) => {
      let query = transaction.selectFrom('projects').select('id').where('team', '=', team).where('id', '=', id);
      if (this.dialect === 'postgres') query = query.forUpdate();
      if ((await query.executeTakeFirst()) === undefined) return null;
      const liveTokens = await liveTokenIds(transaction, now, team, id);
      if (liveTokens.length > 0) return { deleted: false, liveTokens };
      await transaction.deleteFrom('projects').where('team', '=', team).where('id', '=', id).execute();
      await bumpTokenRevision(transaction, this.dialect);
      return { deleted: true, liveTokens: [] };
    });
  }
}

/** Tokens of the team (or of one of its projects) neither revoked nor expired at `now`. */
async function liveTokenIds(db: Kysely<DatabaseSchema>, now: number, team: string, project: string | null): Promise<string[]> {
  let query = db
    .selectFrom('tokens')
    .select('id')
    .where('team', '=', team)
    .where('revoked_at', 'is', null)
    .where((where) => where.or([where('expires_at', 'is', null), where('expires_at', '>', now)]));
  if (project !== null) query = query.where('project', '=', project);
  return (await query.orderBy('id').execute()).map((row) => row.id);
}

function changedFields(current: TeamRecord, changes: TeamChanges, at: number): Pick<TeamRecord, 'name' | 'limits' | 'updatedAt'> {
  return {
    name: changes.name ?? current.name,
    limits: changes.limits === undefined ? current.limits : mergeLimits(current.limits, changes.limits),
    updatedAt: at,
  };
}

export function limitsJson(limits: Limits): string | null {
  return Object.keys(limits).length === 0 ? null : JSON.stringify(limits);
}

export function limitsFromJson(json: string | null): Limits {
  return json === null ? {} : (JSON.parse(json) as Limits);
}

function teamRow(record: TeamRecord): TeamsTable {
  return { id: record.id, name: record.name, limits: limitsJson(record.limits), created_at: record.createdAt, updated_at: record.updatedAt };
}

function fromTeamRow(row: Selectable<TeamsTable>): TeamRecord {
  return { id: row.id, name: row.name, limits: limitsFromJson(row.limits), createdAt: Number(row.created_at), updatedAt: Number(row.updated_at) };
}

function fromProjectRow(row: Selectable<ProjectsTable>): ProjectRecord {
  return { ...fromTeamRow(row), team: row.team };
}
