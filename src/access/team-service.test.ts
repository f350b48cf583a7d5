import { afterEach, beforeEach, expect, it } from 'vitest';
import { describeEachBackend } from '../../test/support/database-backends.js';
import { GatewayError } from '../errors/index.js';
import type { Stores } from '../store/index.js';
import { TeamService } from './team-service.js';
import { TokenService } from './token-service.js';

/** The refusal a call ends with, as the admin API would answer it. */
async function refusal(call: Promise<unknown>): Promise<{ status: number; code: string; param: string | null; message: string; loc?: (string | number)[] }> {
  const error = await call.then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!(error instanceof GatewayError)) throw new Error(`expected a GatewayError, got ${String(error)}`);
  return {
    status: error.status,
    code: error.code,
    param: error.param,
    message: error.message,
    ...(error.detail?.[0] === undefined ? {} : { loc: error.detail[0].loc }),
  };
}

describeEachBackend('TeamService', (backend) => {
  let stores: Stores;
  let dispose: () => Promise<void>;
  let changes: number;
  let teams: TeamService;
  let tokens: TokenService;

  beforeEach(async () => {
    ({ stores, dispose } = await backend.open());
    changes = 0;
    const onChange = async () => {
      changes++;
    };
    teams = new TeamService(stores.teams, () => 1_750_000_000_000, onChange);
    tokens = new TokenService(stores.tokens, 'svc_', () => 1_750_000_000_000, onChange);
  });
  afterEach(async () => {
    await dispose();
  });

  it('creates, reads, changes and deletes teams and projects, telling the token cache each time', async () => {
    expect(await teams.createTeam({ id: 'search', name: ' Search ', limits: { rpm: 600, usdPerMonth: 12.5 } })).toEqual({
      id: 'search',
      name: 'Search',
      limits: { rpm: 600, usdPerMonth: 12.5 },
      createdAt: 1_750_000_000_000,
      updatedAt: 1_750_000_000_000,
    });
    expect(await teams.createTeam({ id: 'ads' })).toMatchObject({ id: 'ads', name: 'ads', limits: {} });
    expect(await teams.createProject('search', { id: 'ranker', limits: { maxConcurrent: 2 } })).toMatchObject({ team: 'search', id: 'ranker', name: 'ranker' });
    expect(changes).toBe(3);
    expect((await teams.updateTeam('search', { limits: { rpm: null, tpm: 1_000 } })).limits).toEqual({ tpm: 1_000, usdPerMonth: 12.5 });
    expect((await teams.updateProject('search', 'ranker', { name: 'Ranker' })).name).toBe('Ranker');
    expect(changes).toBe(5);
    expect((await teams.listTeams()).data.map((team) => team.id)).toEqual(['ads', 'search']);
    expect((await teams.listProjects('search')).data.map((project) => project.id)).toEqual(['ranker']);
    await teams.deleteProject('search', 'ranker');
    await teams.deleteTeam('search');
    expect(changes).toBe(7);
    expect(await refusal(teams.getTeam('search'))).toMatchObject({ status: 404, code: 'team_not_found', param: 'id' });
  });

  it('refuses bad input with 422 naming the field, and writes nothing', async () => {
    const cases: Array<[() => Promise<unknown>, string]> = [
      [() => teams.createTeam({ id: '' }), 'id'],
      [() => teams.createTeam({ id: '../etc' }), 'id'],
      [() => teams.createTeam({ id: 'x'.repeat(129) }), 'id'],
      [() => teams.createTeam({ id: 'ok', name: '   ' }), 'name'],
      [() => teams.createTeam({ id: 'ok', limits: { rpm: 0 } }), 'limits.rpm'],
      [() => teams.createTeam({ id: 'ok', limits: { tpm: 1.5 } }), 'limits.tpm'],
      [() => teams.createTeam({ id: 'ok', limits: { maxConcurrent: -1 } }), 'limits.max_concurrent'],
      [() => teams.createTeam({ id: 'ok', limits: { tokensTotal: 2 ** 60 } }), 'limits.tokens_total'],
      [() => teams.createTeam({ id: 'ok', limits: { usdPerDay: 0 } }), 'limits.usd_per_day'],
      [() => teams.createTeam({ id: 'ok', limits: { usdPerMonth: Number.NaN } }), 'limits.usd_per_month'],
      [() => teams.createProject('nobody', { id: 'p' }), 'team'],
    ];
    for (const [call, field] of cases) expect(await refusal(call())).toMatchObject({ status: 422, code: 'validation_error', param: field });
    expect((await teams.listTeams()).data).toEqual([]);
    expect(changes).toBe(0);
    // projects create never makes its team: the team is an input there, so 422 (from the path).
    expect(await refusal(teams.createProject('nobody', { id: 'p' }))).toMatchObject({
      loc: ['path', 'team'],
      message: expect.stringContaining("no team 'nobody'"),
    });
    expect(await stores.teams.getTeam('nobody')).toBeNull();
    await teams.createTeam({ id: 'search' });
    expect(await refusal(teams.updateTeam('search', { limits: { rpm: 0 } }))).toMatchObject({ status: 422, param: 'limits.rpm' });
    expect(await refusal(teams.updateTeam('search', { name: '' }))).toMatchObject({ status: 422, param: 'name' });
  });

  it('answers 404 for an unknown subject and 409 for an existing id', async () => {
    await teams.createTeam({ id: 'search' });
    await teams.createProject('search', { id: 'ranker' });
    expect(await refusal(teams.createTeam({ id: 'search' }))).toMatchObject({ status: 409, code: 'team_exists' });
    expect(await refusal(teams.createProject('search', { id: 'ranker' }))).toMatchObject({ status: 409, code: 'project_exists' });
    expect(await refusal(teams.updateTeam('nobody', { name: 'x' }))).toMatchObject({ status: 404, code: 'team_not_found' });
    expect(await refusal(teams.deleteTeam('nobody'))).toMatchObject({ status: 404, code: 'team_not_found' });
    expect(await refusal(teams.listProjects('nobody'))).toMatchObject({ status: 404, code: 'team_not_found', param: 'team' });
    expect(await refusal(teams.getProject('nobody', 'ranker'))).toMatchObject({ status: 404, code: 'team_not_found', param: 'team' });
    expect(await refusal(teams.getProject('search', 'nope'))).toMatchObject({ status: 404, code: 'project_not_found' });
    expect(await refusal(teams.updateProject('search', 'nope', { name: 'x' }))).toMatchObject({ status: 404, code: 'project_not_found' });
    expect(await refusal(teams.deleteProject('search', 'nope'))).toMatchObject({ status: 404, code: 'project_not_found' });
  });

  it('refuses to delete a team or project with live tokens (409 naming them), and deletes once they are revoked', async () => {
    await teams.createTeam({ id: 'search' });
    await teams.createProject('search', { id: 'ranker' });
    const { record: first } = await tokens.create({ team: 'search', project: 'ranker' });
    const { record: second } = await tokens.create({ team: 'search' });
    const team = await refusal(teams.deleteTeam('search'));
    expect(team).toMatchObject({ status: 409, code: 'team_has_tokens' });
    expect(team.message).toContain(first.id);
    expect(team.message).toContain(second.id);
    const project = await refusal(teams.deleteProject('search', 'ranker'));
    expect(project).toMatchObject({ status: 409, code: 'project_has_tokens' });
    expect(project.message).toContain(first.id);
    expect(project.message).not.toContain(second.id);
    expect(await stores.teams.getProject('search', 'ranker')).not.toBeNull();
    await tokens.revoke(first.id);
    await teams.deleteProject('search', 'ranker');
    await tokens.revoke(second.id);
    await teams.deleteTeam('search');
    expect(await stores.teams.getTeam('search')).toBeNull();
  });

  it('pages lists by cursor, at most 1,000 a page, and refuses a malformed cursor', async () => {
    for (const id of ['a', 'b', 'c', 'd', 'e']) await teams.createTeam({ id });
    const first = await teams.listTeams({ limit: 2 });
    expect(first.data.map((team) => team.id)).toEqual(['a', 'b']);
    const second = await teams.listTeams({ limit: 2, cursor: first.nextCursor as string });
    expect(second.data.map((team) => team.id)).toEqual(['c', 'd']);
    const last = await teams.listTeams({ limit: 2, cursor: second.nextCursor as string });
    expect(last).toEqual({ data: [expect.objectContaining({ id: 'e' })], nextCursor: null });
    expect(await refusal(teams.listTeams({ limit: 1_001 }))).toMatchObject({ status: 422, param: 'limit', loc: ['query', 'limit'] });
    expect(await refusal(teams.listTeams({ limit: 0 }))).toMatchObject({ status: 422, param: 'limit' });
    for (const cursor of ['not a cursor', 'e30', Buffer.from('[1,"x"]').toString('base64url')]) {
      expect(await refusal(teams.listTeams({ cursor }))).toMatchObject({ status: 422, param: 'cursor' });
    }
    expect((await teams.listTeams({ limit: 1_000 })).data).toHaveLength(5);
  });
});
