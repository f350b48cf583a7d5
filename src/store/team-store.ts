import type { Kysely, Selectable } from 'kysely';
import type { DatabaseSchema, ProjectsTable, TeamsTable } from './database-schema.js';

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
  limits?: Limits;
}

export interface TeamStore {
  /** False when a team with this id exists already. */
  insertTeam(record: TeamRecord): Promise<boolean>;
  getTeam(id: string): Promise<TeamRecord | null>;
  listTeams(): Promise<TeamRecord[]>;
  /** The team as changed; null when there is none. */
  updateTeam(id: string, changes: TeamChanges, at: number): Promise<TeamRecord | null>;
  /**
   * Removes the team and its projects, unless tokens that are neither revoked nor expired at `now`
   * belong to it: then nothing is removed and their ids are returned. Null when there is no team.
   */
  deleteTeam(id: string, now: number): Promise<{ deleted: boolean; liveTokens: string[] } | null>;
  /** False when the project exists already in that team; throws when the team does not exist. */
  insertProject(record: ProjectRecord): Promise<boolean>;
  getProject(team: string, id: string): Promise<ProjectRecord | null>;
  listProjects(team: string): Promise<ProjectRecord[]>;
  updateProject(team: string, id: string, changes: TeamChanges, at: number): Promise<ProjectRecord | null>;
  /** As deleteTeam, for the project's live tokens. */
  deleteProject(team: string, id: string, now: number): Promise<{ deleted: boolean; liveTokens: string[] } | null>;
}

export class KyselyTeamStore implements TeamStore {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  async insertTeam(record: TeamRecord): Promise<boolean> {
    return this.db.transaction().execute(async (transaction) => {
      const existing = await transaction.selectFrom('teams').select('id').where('id', '=', record.id).executeTakeFirst();
      if (existing !== undefined) return false;
      await transaction.insertInto('teams').values(teamRow(record)).execute();
      return true;
    });
  }

  async getTeam(id: string): Promise<TeamRecord | null> {
    const row = await this.db.selectFrom('teams').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? null : fromTeamRow(row);
  }

  async listTeams(): Promise<TeamRecord[]> {
    return (await this.db.selectFrom('teams').selectAll().orderBy('id').execute()).map(fromTeamRow);
  }

  async updateTeam(id: string, changes: TeamChanges, at: number): Promise<TeamRecord | null> {
    const result = await this.db.updateTable('teams').set(changedColumns(changes, at)).where('id', '=', id).executeTakeFirst();
    return Number(result.numUpdatedRows) === 0 ? null : this.getTeam(id);
  }

  async deleteTeam(id: string, now: number): Promise<{ deleted: boolean; liveTokens: string[] } | null> {
    return this.db.transaction().execute(async (transaction) => {
      const team = await transaction.selectFrom('teams').select('id').where('id', '=', id).executeTakeFirst();
      if (team === undefined) return null;
      const liveTokens = await liveTokenIds(transaction, now, id, null);
      if (liveTokens.length > 0) return { deleted: false, liveTokens };
      await transaction.deleteFrom('projects').where('team', '=', id).execute();
      await transaction.deleteFrom('teams').where('id', '=', id).execute();
      return { deleted: true, liveTokens: [] };
    });
  }

  async insertProject(record: ProjectRecord): Promise<boolean> {
    return this.db.transaction().execute(async (transaction) => {
      const team = await transaction.selectFrom('teams').select('id').where('id', '=', record.team).executeTakeFirst();
      if (team === undefined) throw new Error(`no team ${record.team}`);
      const existing = await transaction.selectFrom('projects').select('id').where('team', '=', record.team).where('id', '=', record.id).executeTakeFirst();
      if (existing !== undefined) return false;
      await transaction.insertInto('projects').values({ ...teamRow(record), team: record.team }).execute();
      return true;
    });
  }

  async getProject(team: string, id: string): Promise<ProjectRecord | null> {
    const row = await this.db.selectFrom('projects').selectAll().where('team', '=', team).where('id', '=', id).executeTakeFirst();
    return row === undefined ? null : fromProjectRow(row);
  }

  async listProjects(team: string): Promise<ProjectRecord[]> {
    return (await this.db.selectFrom('projects').selectAll().where('team', '=', team).orderBy('id').execute()).map(fromProjectRow);
  }

  async updateProject(team: string, id: string, changes: TeamChanges, at: number): Promise<ProjectRecord | null> {
    const result = await this.db.updateTable('projects').set(changedColumns(changes, at)).where('team', '=', team).where('id', '=', id).executeTakeFirst();
    return Number(result.numUpdatedRows) === 0 ? null : this.getProject(team, id);
  }

  async deleteProject(team: string, id: string, now: number): Promise<{ deleted: boolean; liveTokens: string[] } | null> {
    return this.db.transaction().execute(async (transaction) => {
      const project = await transaction.selectFrom('projects').select('id').where('team', '=', team).where('id', '=', id).executeTakeFirst();
      if (project === undefined) return null;
      const liveTokens = await liveTokenIds(transaction, now, team, id);
      if (liveTokens.length > 0) return { deleted: false, liveTokens };
      await transaction.deleteFrom('projects').where('team', '=', team).where('id', '=', id).execute();
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

function changedColumns(changes: TeamChanges, at: number): Partial<TeamsTable> {
  return {
    ...(changes.name === undefined ? {} : { name: changes.name }),
    ...(changes.limits === undefined ? {} : { limits: limitsJson(changes.limits) }),
    updated_at: at,
  };
}

function limitsJson(limits: Limits): string | null {
  return Object.keys(limits).length === 0 ? null : JSON.stringify(limits);
}

function teamRow(record: TeamRecord): TeamsTable {
  return { id: record.id, name: record.name, limits: limitsJson(record.limits), created_at: record.createdAt, updated_at: record.updatedAt };
}

function fromTeamRow(row: Selectable<TeamsTable>): TeamRecord {
  return { id: row.id, name: row.name, limits: row.limits === null ? {} : (JSON.parse(row.limits) as Limits), createdAt: Number(row.created_at), updatedAt: Number(row.updated_at) };
}

function fromProjectRow(row: Selectable<ProjectsTable>): ProjectRecord {
  return { ...fromTeamRow(row), team: row.team };
}
