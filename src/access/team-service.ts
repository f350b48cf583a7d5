import { echo, GatewayError } from '../errors/index.js';
import type { LimitChanges, Limits, ProjectRecord, TeamRecord, TeamStore } from '../store/index.js';
import { checkId, checkLimitChanges, checkLimits, checkName, invalidField } from './input-checks.js';
import { decodeCursor, pageSize, readPage, type Page, type PageRequest } from './list-page.js';

export interface NewTeam {
  id: string;
  /** Shown to people; the id when absent. */
  name?: string | null;
  limits?: Limits;
}

export interface TeamUpdate {
  name?: string;
  /** A merge patch: a number sets that limit, null removes it, absent keeps it. */
  limits?: LimitChanges;
}

/** How many token ids a refused deletion names; the rest are counted. */
const NAMED_TOKENS = 20;

const isId = (value: unknown): value is string => typeof value === 'string';

/**
 * Teams and their projects: what the admin API and the CLI both call. Ids are checked here (see
 * input-checks.ts), so both refuse the same input with the same words. A project is only ever
 * created in a team that exists: nothing here makes a team as a side effect.
 */
export class TeamService {
  constructor(
    private readonly store: TeamStore,
    private readonly now: () => number = Date.now,
    /** Called after every change, so this process's token cache (which carries team and project limits) reloads. */
    private readonly onChange: () => Promise<void> = async () => undefined,
  ) {}

  async createTeam(input: NewTeam): Promise<TeamRecord> {
    const id = checkId(input.id, ['body', 'id']);
    const name = input.name === undefined || input.name === null ? id : checkName(input.name, ['body', 'name']);
    const limits = checkLimits(input.limits ?? {}, ['body', 'limits']);
    const at = this.now();
    const record: TeamRecord = { id, name, limits, createdAt: at, updatedAt: at };
    if (!(await this.store.insertTeam(record))) throw new GatewayError('team_exists', `A team ${echo(id)} exists already.`, { param: 'id' });
    await this.onChange();
    return record;
  }

  async listTeams(request: PageRequest = {}): Promise<Page<TeamRecord>> {
    const limit = pageSize(request);
    const after = decodeCursor(request.cursor, isId);
    return readPage(
      limit,
      (size) => this.store.listTeams({ limit: size, ...(after === undefined ? {} : { after }) }),
      (last) => last.id,
    );
  }

  async getTeam(id: string): Promise<TeamRecord> {
    return (await this.store.getTeam(id)) ?? teamNotFound(id, 'id');
  }

  async updateTeam(id: string, changes: TeamUpdate): Promise<TeamRecord> {
    const checked = checkChanges(changes);
    const team = (await this.store.updateTeam(id, checked, this.now())) ?? teamNotFound(id, 'id');
    await this.onChange();
    return team;
  }

  /** Refused (409, naming them) while tokens neither revoked nor expired belong to the team. */
  async deleteTeam(id: string): Promise<void> {
    const outcome = (await this.store.deleteTeam(id, this.now())) ?? teamNotFound(id, 'id');
    if (!outcome.deleted) {
      throw new GatewayError('team_has_tokens', `Team ${echo(id)} still has live tokens: ${tokenList(outcome.liveTokens)}. Revoke them first.`, {
        param: 'id',
      });
    }
    await this.onChange();
  }

  async createProject(team: string, input: NewTeam): Promise<ProjectRecord> {
    const id = checkId(input.id, ['body', 'id']);
    const name = input.name === undefined || input.name === null ? id : checkName(input.name, ['body', 'name']);
    const limits = checkLimits(input.limits ?? {}, ['body', 'limits']);
    const at = this.now();
    const record: ProjectRecord = { team, id, name, limits, createdAt: at, updatedAt: at };
    const inserted = await this.store.insertProject(record);
    // The team is the create's input, not its subject: an unknown one is bad input (422), and never made here.
    if (inserted === null) throw invalidField(['path', 'team'], `no team ${echo(team)} exists; create it first (a project never creates its team)`);
    if (!inserted) throw new GatewayError('project_exists', `Team ${echo(team)} has a project ${echo(id)} already.`, { param: 'id' });
    await this.onChange();
    return record;
  }

  async listProjects(team: string, request: PageRequest = {}): Promise<Page<ProjectRecord>> {
    const limit = pageSize(request);
    const after = decodeCursor(request.cursor, isId);
    await this.getTeamAs(team);
    return readPage(
      limit,
      (size) => this.store.listProjects(team, { limit: size, ...(after === undefined ? {} : { after }) }),
      (last) => last.id,
    );
  }

  async getProject(team: string, id: string): Promise<ProjectRecord> {
    return (await this.store.getProject(team, id)) ?? this.projectNotFound(team, id);
  }

  async updateProject(team: string, id: string, changes: TeamUpdate): Promise<ProjectRecord> {
    const checked = checkChanges(changes);
    const project = (await this.store.updateProject(team, id, checked, this.now())) ?? (await this.projectNotFound(team, id));
    await this.onChange();
    return project;
  }

  async deleteProject(team: string, id: string): Promise<void> {
    const outcome = (await this.store.deleteProject(team, id, this.now())) ?? (await this.projectNotFound(team, id));
    if (!outcome.deleted) {
      throw new GatewayError(
        'project_has_tokens',
        `Project ${echo(id)} of team ${echo(team)} still has live tokens: ${tokenList(outcome.liveTokens)}. Revoke them first.`,
        { param: 'id' },
      );
    }
    await this.onChange();
  }

  private async getTeamAs(team: string): Promise<TeamRecord> {
    return (await this.store.getTeam(team)) ?? teamNotFound(team, 'team');
  }

  /** Says which is missing: the team, or the project in it. */
  private async projectNotFound(team: string, id: string): Promise<never> {
    await this.getTeamAs(team);
    throw new GatewayError('project_not_found', `Team ${echo(team)} has no project ${echo(id)}.`, { param: 'id' });
  }
}

function checkChanges(changes: TeamUpdate): TeamUpdate {
  return {
    ...(changes.name === undefined ? {} : { name: checkName(changes.name, ['body', 'name']) }),
    ...(changes.limits === undefined ? {} : { limits: checkLimitChanges(changes.limits, ['body', 'limits']) }),
  };
}

function teamNotFound(id: string, param: string): never {
  throw new GatewayError('team_not_found', `No team has the id ${echo(id)}.`, { param });
}

function tokenList(ids: readonly string[]): string {
  const named = ids.slice(0, NAMED_TOKENS).join(', ');
  return ids.length > NAMED_TOKENS ? `${named} and ${ids.length - NAMED_TOKENS} more` : named;
}
