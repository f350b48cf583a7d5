import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, type CliRun } from '../support/run-cli.js';
import { startOpenAIFakeGateway, type OpenAIFakeGateway } from '../support/start-openai-fake-gateway.js';

/**
 * `switchyard teams|projects …` and `tokens update`, against the database of a running gateway:
 * bad input exits 64 naming the flag or field, a conflict or an unknown record exits 1.
 */
let harness: OpenAIFakeGateway;

beforeAll(async () => {
  harness = await startOpenAIFakeGateway();
});
afterAll(async () => {
  await harness.close();
});

const run = (...argv: string[]): Promise<CliRun> => cli(...argv, '--config', harness.configPath);
const lastError = (result: CliRun) => result.stderr.at(-1) ?? '';
const json = (result: CliRun) => JSON.parse(result.stdout.join('\n')) as Array<Record<string, unknown>>;

describe('switchyard teams', () => {
  it('creates a team with limits, lists it, changes a limit, removes one with none', async () => {
    const created = await run('teams', 'create', 'ml', '--name', 'Machine learning', '--rpm', '600', '--tokens-per-month', '5000000', '--usd-per-day', '12.5');
    expect(created.code, created.stderr.join('\n')).toBe(0);
    expect(created.stdout).toEqual(['ml']);
    const listed = json(await run('teams', 'list', '--json'));
    expect(listed.find((team) => team['id'] === 'ml')).toMatchObject({
      name: 'Machine learning',
      limits: { rpm: 600, tokens_per_month: 5_000_000, usd_per_day: 12.5 },
    });
    const table = await run('teams', 'list');
    expect(table.stdout[0]).toMatch(/^ID +NAME +LIMITS +CREATED$/);
    expect(table.stdout.join('\n')).toMatch(/ml +Machine learning +rpm=600 tokens_per_month=5000000 usd_per_day=12.5/);
    const updated = await run('teams', 'update', 'ml', '--rpm', 'none', '--tpm', '100000');
    expect(updated).toMatchObject({ code: 0, stdout: ['Updated team ml (limits: tpm=100000 tokens_per_month=5000000 usd_per_day=12.5).'] });
    expect(await harness.gateway.stores.teams.getTeam('ml')).toMatchObject({ limits: { tpm: 100_000, tokensPerMonth: 5_000_000, usdPerDay: 12.5 } });
  });

  const refused: Array<[string, string[], number, RegExp]> = [
    ['a limit of zero', ['teams', 'create', 'bad', '--rpm', '0'], 64, /--rpm: expected a positive integer, got "0"/],
    ['a fractional count', ['teams', 'create', 'bad', '--max-concurrent', '1.5'], 64, /--max-concurrent: expected a positive integer/],
    ['none on a create', ['teams', 'create', 'bad', '--tpm', 'none'], 64, /--tpm: expected a positive integer, got "none"/],
    ['a negative dollar limit', ['teams', 'create', 'bad', '--usd-per-month', '-1'], 64, /--usd-per-month: expected a positive number/],
    ['an id with a slash', ['teams', 'create', 'a/b'], 64, /id: must be 1 to 128 of A-Z a-z 0-9/],
    ['an id that exists', ['teams', 'create', 'ml'], 1, /A team 'ml' exists already/],
    ['an update of an unknown team', ['teams', 'update', 'nobody', '--rpm', '5'], 1, /No team has the id 'nobody'/],
    ['a bad limit on an update', ['teams', 'update', 'ml', '--tokens-total', 'many'], 64, /--tokens-total: expected a positive integer or none, got "many"/],
    ['a delete of an unknown team', ['teams', 'delete', 'nobody'], 1, /No team has the id 'nobody'/],
    ['a project of an unknown team', ['projects', 'create', 'p', '--team', 'nobody'], 64, /team: no team 'nobody' exists/],
    ['a project without its team', ['projects', 'create', 'p'], 64, /required option '--team <team>'/],
    ['a project with a bad limit', ['projects', 'create', 'p', '--team', 'ml', '--tokens-per-day', '0'], 64, /--tokens-per-day: expected a positive integer/],
  ];
  for (const [name, argv, code, message] of refused) {
    it(`refuses ${name} (exit ${code}) and writes nothing`, async () => {
      const teams = await harness.gateway.stores.teams.listTeams();
      const projects = await harness.gateway.stores.teams.listProjects('ml');
      const result = await run(...argv);
      expect(result.code).toBe(code);
      expect(result.stdout).toEqual([]);
      expect(lastError(result)).toMatch(message);
      expect(await harness.gateway.stores.teams.listTeams()).toEqual(teams);
      expect(await harness.gateway.stores.teams.listProjects('ml')).toEqual(projects);
    });
  }
});

describe('switchyard projects', () => {
  it("creates, lists, changes and deletes a team's project", async () => {
    expect(await run('projects', 'create', 'ranker', '--team', 'ml', '--max-concurrent', '4')).toMatchObject({ code: 0, stdout: ['ranker'] });
    expect(json(await run('projects', 'list', '--team', 'ml', '--json'))).toEqual([
      expect.objectContaining({ id: 'ranker', team: 'ml', limits: { max_concurrent: 4 } }),
    ]);
    expect((await run('projects', 'list', '--team', 'ml')).stdout[1]).toMatch(/^ranker +ml +ranker +max_concurrent=4/);
    expect(await run('projects', 'update', 'ranker', '--team', 'ml', '--name', 'Ranker', '--max-concurrent', 'none', '--rpm', '30')).toMatchObject({ code: 0 });
    expect(await harness.gateway.stores.teams.getProject('ml', 'ranker')).toMatchObject({ name: 'Ranker', limits: { rpm: 30 } });
    expect(await run('projects', 'create', 'scratch', '--team', 'ml')).toMatchObject({ code: 0 });
    expect(await run('projects', 'delete', 'scratch', '--team', 'ml')).toMatchObject({ code: 0, stdout: ['Deleted project scratch of team ml.'] });
    const unknown = await run('projects', 'delete', 'scratch', '--team', 'ml');
    expect(unknown.code).toBe(1);
    expect(lastError(unknown)).toMatch(/Team 'ml' has no project 'scratch'/);
    expect((await run('projects', 'list', '--team', 'nobody')).code).toBe(1);
  });
});

describe('switchyard tokens update, and deleting a team with live tokens', () => {
  it('changes limits, scopes, models and expiry; refuses a revoked token (64) and an unknown one (1)', async () => {
    const created = await run(
      'tokens',
      'create',
      '--team',
      'ml',
      '--project',
      'ranker',
      '--models',
      'gpt-4o-mini',
      '--rpm',
      '60',
      '--tpm',
      '1000',
      '--expires-in',
      '1d',
    );
    expect(created.code, created.stderr.join('\n')).toBe(0);
    const token = created.stdout.at(-1) as string;
    const id = json(await run('tokens', 'list', '--json')).find((entry) => (entry['limits'] as Record<string, number>)['tpm'] === 1000)?.['id'] as string;
    const updated = await run(
      'tokens',
      'update',
      id,
      '--rpm',
      'none',
      '--max-concurrent',
      '2',
      '--scopes',
      'chat,models:read',
      '--models',
      'all',
      '--expires-in',
      'never',
    );
    expect(updated.code, updated.stderr.join('\n')).toBe(0);
    expect(updated.stdout).toEqual([`Updated ${id}.`]);
    expect(await harness.gateway.stores.tokens.findById(id)).toMatchObject({
      limits: { tpm: 1000, maxConcurrent: 2 },
      scopes: ['chat', 'models:read'],
      models: null,
      expiresAt: null,
    });
    // The running gateway sees the change on the next request: every model now, not one.
    expect((await harness.clientFor(token).models.list()).data.length).toBeGreaterThan(1);
    const table = await run('tokens', 'list');
    expect(table.stdout[0]).toMatch(/ LIMITS +EXPIRES$/);
    expect(table.stdout.find((line) => line.startsWith(id))).toMatch(/tpm=1000 max_concurrent=2 +never$/);

    const bad = await run('tokens', 'update', id, '--tpm', '0');
    expect([bad.code, lastError(bad)]).toEqual([64, 'switchyard: --tpm: expected a positive integer or none, got "0"']);
    const badScope = await run('tokens', 'update', id, '--scopes', 'root');
    expect([badScope.code, lastError(badScope)]).toEqual([64, expect.stringMatching(/scopes: unknown scope root/)]);
    const badDuration = await run('tokens', 'update', id, '--expires-in', 'soon');
    expect([badDuration.code, lastError(badDuration)]).toEqual([64, expect.stringMatching(/--expires-in: expected a duration/)]);
    const unknown = await run('tokens', 'update', 'tok_nope', '--rpm', '1');
    expect([unknown.code, lastError(unknown)]).toEqual([1, "switchyard: No token has the id 'tok_nope'."]);

    // Deleting the team (or project) while the token lives is refused, naming it.
    const refusedTeam = await run('teams', 'delete', 'ml');
    expect(refusedTeam.code).toBe(1);
    expect(lastError(refusedTeam)).toMatch(new RegExp(`Team 'ml' still has live tokens: .*${id}`));
    const refusedProject = await run('projects', 'delete', 'ranker', '--team', 'ml');
    expect([refusedProject.code, lastError(refusedProject)]).toEqual([1, expect.stringContaining(id)]);
    expect(await harness.gateway.stores.teams.getTeam('ml')).not.toBeNull();

    expect((await run('tokens', 'revoke', id)).code).toBe(0);
    const revoked = await run('tokens', 'update', id, '--rpm', '5');
    expect(revoked.code).toBe(64);
    expect(lastError(revoked)).toMatch(new RegExp(`id: token '${id}' is revoked`));
    expect((await harness.gateway.stores.tokens.findById(id))?.limits).toEqual({ tpm: 1000, maxConcurrent: 2 });

    expect(await run('teams', 'delete', 'ml')).toMatchObject({ code: 0, stdout: ['Deleted team ml and its projects.'] });
    expect(await harness.gateway.stores.teams.getProject('ml', 'ranker')).toBeNull();
  });
});
