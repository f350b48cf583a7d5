import { Value } from '@sinclair/typebox/value';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startOpenAIFakeGateway, type OpenAIFakeGateway } from '../support/start-openai-fake-gateway.js';
import { describeEachBackend } from '../support/database-backends.js';

interface Answer {
  status: number;
  body: Record<string, unknown> & { error?: { code: string; param: string | null; message: string; type: string }; detail?: Array<{ loc: unknown[] }> };
  text: string;
}

describeEachBackend('the admin API for teams, projects and tokens', (backend) => {
  let harness: OpenAIFakeGateway;
  let drop: () => Promise<void>;
  let adminToken: string;

  beforeAll(async () => {
    const database = await backend.empty();
    drop = database.dispose;
    harness = await startOpenAIFakeGateway({ databaseUrl: database.url });
    adminToken = await harness.createToken({ team: 'ops', scopes: ['admin'] });
  });
  afterAll(async () => {
    await harness.close();
    await drop();
  });

  async function admin(method: string, path: string, body?: unknown, raw?: string): Promise<Answer> {
    const response = await fetch(`${harness.gateway.url}/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${adminToken}`, ...(body === undefined && raw === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(raw !== undefined ? { body: raw } : body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: JSON.parse(text) as Answer['body'], text };
  }

  /** The answer, checked against the response schema its route declares (and the OpenAPI document shows). */
  function conforms(operationId: string, answer: Answer): Answer['body'] {
    const route = harness.gateway.adminRoutes.find((candidate) => candidate.operationId === operationId);
    expect(route, operationId).toBeDefined();
    expect(answer.status, answer.text).toBe(route?.status ?? 200);
    expect([...Value.Errors(route?.response as never, answer.body)].map((error) => `${error.path} ${error.message}`)).toEqual([]);
    return answer.body;
  }

  function refused(answer: Answer, status: number, code: string, param?: string | null): string {
    expect(answer.status, answer.text).toBe(status);
    expect(answer.body.error?.code).toBe(code);
    if (param !== undefined) expect(answer.body.error?.param).toBe(param);
    return answer.body.error?.message ?? '';
  }

  const teamIds = async () => ((await admin('GET', '/teams?limit=1000')).body['data'] as Array<{ id: string }>).map((team) => team.id);
  const tokenCount = async () => (await harness.gateway.stores.tokens.list()).length;

  it('creates, reads, changes and deletes a team, limits in snake_case with a merge patch', async () => {
    const created = conforms(
      'createTeam',
      await admin('POST', '/teams', { id: 'search', name: 'Search', limits: { rpm: 600, tokens_per_month: 5_000_000, usd_per_day: 12.5 } }),
    );
    expect(created).toMatchObject({ id: 'search', name: 'Search', limits: { rpm: 600, tokens_per_month: 5_000_000, usd_per_day: 12.5 } });
    expect(Date.parse(created['created_at'] as string)).toBeGreaterThan(0);
    expect(conforms('getTeam', await admin('GET', '/teams/search'))).toEqual(created);
    const changed = conforms('updateTeam', await admin('PATCH', '/teams/search', { limits: { rpm: null, tpm: 100_000 } }));
    expect(changed['limits']).toEqual({ tpm: 100_000, tokens_per_month: 5_000_000, usd_per_day: 12.5 });
    const listed = conforms('listTeams', await admin('GET', '/teams'));
    expect(listed).toMatchObject({ object: 'list', next_cursor: null });
    expect((listed['data'] as Array<{ id: string }>).map((team) => team.id)).toContain('search');
    conforms('createTeam', await admin('POST', '/teams', { id: 'short-lived' }));
    expect(conforms('deleteTeam', await admin('DELETE', '/teams/short-lived'))).toEqual({ id: 'short-lived', deleted: true });
    refused(await admin('GET', '/teams/short-lived'), 404, 'team_not_found', 'id');
    refused(await admin('PATCH', '/teams/short-lived', { name: 'x' }), 404, 'team_not_found');
    refused(await admin('DELETE', '/teams/short-lived'), 404, 'team_not_found');
    refused(await admin('POST', '/teams', { id: 'search' }), 409, 'team_exists', 'id');
  });

  it('refuses every bad team body (400 / 422 naming the field) and writes nothing', async () => {
    const before = await teamIds();
    const cases: Array<[unknown, string]> = [
      [{ id: 'bad', limits: { rpm: 0 } }, 'limits.rpm'],
      [{ id: 'bad', limits: { rpm: 1.5 } }, 'limits.rpm'],
      [{ id: 'bad', limits: { tpm: '10' } }, 'limits.tpm'],
      [{ id: 'bad', limits: { max_concurrent: -1 } }, 'limits.max_concurrent'],
      [{ id: 'bad', limits: { tokens_total: 2 ** 60 } }, 'limits.tokens_total'],
      [{ id: 'bad', limits: { usd_per_month: 0 } }, 'limits.usd_per_month'],
      [{ id: 'bad', limits: { requests_per_hour: 5 } }, 'limits.requests_per_hour'],
      [{ id: 'bad', limits: [] }, 'limits'],
      [{ id: '../x' }, 'id'],
      [{ id: '' }, 'id'],
      [{ name: 'no id' }, 'id'],
      [{ id: 'bad', colour: 'red' }, 'colour'],
    ];
    for (const [body, field] of cases) {
      const answer = await admin('POST', '/teams', body);
      refused(answer, 422, 'validation_error', field);
      expect(answer.body.detail?.[0]?.loc[0]).toBe('body');
    }
    refused(await admin('POST', '/teams', undefined, '[1]'), 400, 'invalid_body');
    refused(await admin('POST', '/teams', undefined, '{"id":'), 400, 'invalid_json');
    refused(await admin('PATCH', '/teams/search', { limits: { tpm: 0 } }), 422, 'validation_error', 'limits.tpm');
    expect(await teamIds()).toEqual(before);
  });

  it("manages a team's projects, and never creates a team for a project", async () => {
    conforms('createTeam', await admin('POST', '/teams', { id: 'ads' }));
    const project = conforms('createProject', await admin('POST', '/teams/ads/projects', { id: 'bidder', limits: { max_concurrent: 4 } }));
    expect(project).toMatchObject({ id: 'bidder', team: 'ads', name: 'bidder', limits: { max_concurrent: 4 } });
    expect(conforms('getProject', await admin('GET', '/teams/ads/projects/bidder'))).toEqual(project);
    expect(conforms('updateProject', await admin('PATCH', '/teams/ads/projects/bidder', { name: 'Bidder', limits: { max_concurrent: null } }))).toMatchObject({
      name: 'Bidder',
      limits: {},
    });
    expect((conforms('listProjects', await admin('GET', '/teams/ads/projects'))['data'] as Array<{ id: string }>).map((item) => item.id)).toEqual(['bidder']);
    const unknownTeam = await admin('POST', '/teams/nobody/projects', { id: 'p' });
    expect(refused(unknownTeam, 422, 'validation_error', 'team')).toContain("no team 'nobody'");
    expect(unknownTeam.body.detail?.[0]?.loc).toEqual(['path', 'team']);
    expect(await teamIds()).not.toContain('nobody');
    refused(await admin('POST', '/teams/ads/projects', { id: 'bidder' }), 409, 'project_exists', 'id');
    refused(await admin('POST', '/teams/ads/projects', { id: 'p', limits: { tokens_per_day: 0 } }), 422, 'validation_error', 'limits.tokens_per_day');
    refused(await admin('GET', '/teams/ads/projects/nope'), 404, 'project_not_found');
    refused(await admin('GET', '/teams/nobody/projects'), 404, 'team_not_found', 'team');
    refused(await admin('GET', '/teams/nobody/projects/bidder'), 404, 'team_not_found', 'team');
    conforms('createProject', await admin('POST', '/teams/ads/projects', { id: 'gone' }));
    expect(conforms('deleteProject', await admin('DELETE', '/teams/ads/projects/gone'))).toEqual({ id: 'gone', deleted: true });
  });

  it('creates a token with its secret once, which works at once and is never shown again', async () => {
    const created = conforms(
      'createToken',
      await admin('POST', '/tokens', {
        team: 'ads',
        project: 'bidder',
        name: 'ci',
        scopes: ['chat', 'models:read'],
        models: ['gpt-4o-mini'],
        expires_in: '30d',
        limits: { rpm: 60, usd_per_month: 20 },
      }),
    );
    expect(created).toMatchObject({
      team: 'ads',
      project: 'bidder',
      status: 'active',
      name: 'ci',
      limits: { rpm: 60, usd_per_month: 20 },
      models: ['gpt-4o-mini'],
    });
    const secret = created['secret'] as string;
    expect(secret).toMatch(/^svc_[A-Za-z0-9]{43}$/);
    expect(secret.startsWith(created['prefix'] as string)).toBe(true);
    expect((await harness.clientFor(secret).models.list()).data.map((model) => model.id)).toEqual(['gpt-4o-mini']);
    const id = created['id'] as string;
    const shown = [await admin('GET', `/tokens/${id}`), await admin('GET', '/tokens'), await admin('GET', `/tokens?team=ads&project=bidder`)];
    conforms('getToken', shown[0] as Answer);
    conforms('listTokens', shown[1] as Answer);
    for (const answer of shown) {
      expect(answer.text).not.toContain(secret.slice(10));
      expect(answer.text).not.toContain('secret');
      expect(answer.text).not.toContain((await harness.gateway.stores.tokens.findById(id))?.secretHash as string);
    }
    expect((shown[2]?.body['data'] as Array<{ id: string }>).map((token) => token.id)).toEqual([id]);
    // A team named by a token for the first time is made, as `tokens create --team` has always done.
    conforms('createToken', await admin('POST', '/tokens', { team: 'fresh-team' }));
    expect(await teamIds()).toContain('fresh-team');
  });

  it('refuses every bad token body with 422 naming the field, and leaves nothing behind', async () => {
    const before = await tokenCount();
    const teamsBefore = await teamIds();
    const cases: Array<[unknown, string]> = [
      [{ team: 'ads', project: 'nope' }, 'project'],
      // A project of another team is no project of this one.
      [{ team: 'search', project: 'bidder' }, 'project'],
      // An unknown team with a project: refused, and the team is not made either.
      [{ team: 'ghost', project: 'bidder' }, 'project'],
      [{ team: 'ads', limits: { rpm: 0 } }, 'limits.rpm'],
      [{ team: 'ads', limits: { tpm: 2.5 } }, 'limits.tpm'],
      [{ team: 'ads', limits: { tokens_per_day: -5 } }, 'limits.tokens_per_day'],
      [{ team: 'ads', limits: { usd_per_day: 0 } }, 'limits.usd_per_day'],
      [{ team: 'ads', scopes: ['chat', 'fly'] }, 'scopes'],
      [{ team: 'ads', scopes: [] }, 'scopes'],
      [{ team: 'ads', models: [] }, 'models'],
      [{ team: 'ads', expires_in: '30x' }, 'expires_in'],
      [{ team: 'ads', expires_at: '2001-01-01T00:00:00Z' }, 'expires_at'],
      [{ team: 'ads', expires_at: 'tomorrow' }, 'expires_at'],
      [{ team: 'ads', expires_in: '1d', expires_at: '2999-01-01T00:00:00Z' }, 'expires_at'],
      [{ team: 'a b' }, 'team'],
      [{}, 'team'],
      [{ team: 'ads', secret: 'svc_mine' }, 'secret'],
    ];
    for (const [body, field] of cases) refused(await admin('POST', '/tokens', body), 422, 'validation_error', field);
    expect(await tokenCount()).toBe(before);
    expect(await teamIds()).toEqual(teamsBefore);
  });

  it('refuses an allow-list naming a model the gateway does not serve (400 unknown_model, the close ones named), on create and change', async () => {
    const before = await tokenCount();
    const typo = refused(await admin('POST', '/tokens', { team: 'ads', models: ['gpt4o-mini'] }), 400, 'unknown_model', 'models');
    expect(typo).toContain("did you mean 'gpt-4o-mini'");
    expect(await tokenCount()).toBe(before);
    const created = conforms('createToken', await admin('POST', '/tokens', { team: 'ads', models: ['gpt-4o-mini'] }));
    refused(await admin('PATCH', `/tokens/${String(created['id'])}`, { models: ['gpt-4o-mini', 'pooled-chatt'] }), 400, 'unknown_model', 'models');
    expect((await harness.gateway.stores.tokens.findById(created['id'] as string))?.models).toEqual(['gpt-4o-mini']);
  });

  it('changes a token (limits as a merge patch) and refuses a revoked one with 422', async () => {
    const created = conforms('createToken', await admin('POST', '/tokens', { team: 'ads', limits: { rpm: 60, tpm: 1_000 }, models: ['gpt-4o-mini'] }));
    const id = created['id'] as string;
    const changed = conforms(
      'updateToken',
      await admin('PATCH', `/tokens/${id}`, {
        limits: { rpm: null, max_concurrent: 2 },
        scopes: ['chat'],
        models: null,
        expires_at: '2999-01-01T00:00:00Z',
        name: 'renamed',
      }),
    );
    expect(changed).toMatchObject({
      limits: { tpm: 1_000, max_concurrent: 2 },
      scopes: ['chat'],
      models: null,
      expires_at: '2999-01-01T00:00:00.000Z',
      name: 'renamed',
    });
    expect(conforms('updateToken', await admin('PATCH', `/tokens/${id}`, { expires_at: null }))['expires_at']).toBeNull();
    refused(await admin('PATCH', `/tokens/${id}`, { limits: { tpm: 0 } }), 422, 'validation_error', 'limits.tpm');
    refused(await admin('PATCH', `/tokens/${id}`, { scopes: ['root'] }), 422, 'validation_error', 'scopes');
    refused(await admin('PATCH', '/tokens/tok_nope', { name: 'x' }), 404, 'token_not_found', 'id');
    refused(await admin('GET', '/tokens/tok_nope'), 404, 'token_not_found', 'id');
    refused(await admin('POST', '/tokens/tok_nope/revoke'), 404, 'token_not_found', 'id');
    const revoked = conforms('revokeToken', await admin('POST', `/tokens/${id}/revoke`));
    expect(revoked['status']).toBe('revoked');
    // Twice keeps the first time.
    expect(conforms('revokeToken', await admin('POST', `/tokens/${id}/revoke`))['revoked_at']).toBe(revoked['revoked_at']);
    const answer = await admin('PATCH', `/tokens/${id}`, { limits: { rpm: 5 } });
    expect(refused(answer, 422, 'validation_error', 'id')).toContain(id);
    expect(answer.body.detail?.[0]?.loc).toEqual(['path', 'id']);
    expect((await harness.gateway.stores.tokens.findById(id))?.limits).toEqual({ tpm: 1_000, maxConcurrent: 2 });
  });

  it('refuses to delete a team or project with live tokens (409 naming them), and deletes once they are revoked', async () => {
    conforms('createTeam', await admin('POST', '/teams', { id: 'doomed' }));
    conforms('createProject', await admin('POST', '/teams/doomed/projects', { id: 'p' }));
    const first = conforms('createToken', await admin('POST', '/tokens', { team: 'doomed', project: 'p' }))['id'] as string;
    const second = conforms('createToken', await admin('POST', '/tokens', { team: 'doomed' }))['id'] as string;
    const team = refused(await admin('DELETE', '/teams/doomed'), 409, 'team_has_tokens', 'id');
    expect(team).toContain(first);
    expect(team).toContain(second);
    expect(refused(await admin('DELETE', '/teams/doomed/projects/p'), 409, 'project_has_tokens')).toContain(first);
    conforms('getProject', await admin('GET', '/teams/doomed/projects/p'));
    for (const id of [first, second]) conforms('revokeToken', await admin('POST', `/tokens/${id}/revoke`));
    conforms('deleteTeam', await admin('DELETE', '/teams/doomed'));
    refused(await admin('GET', '/teams/doomed/projects/p'), 404, 'team_not_found');
  });

  it('pages lists with limit and cursor, refusing a page over 1,000 and a malformed cursor', async () => {
    for (const id of ['page-a', 'page-b', 'page-c']) conforms('createTeam', await admin('POST', '/teams', { id }));
    const seen: string[] = [];
    let path = '/teams?limit=2';
    for (let pages = 0; pages < 50; pages++) {
      const page = conforms('listTeams', await admin('GET', path));
      expect((page['data'] as unknown[]).length).toBeLessThanOrEqual(2);
      seen.push(...(page['data'] as Array<{ id: string }>).map((team) => team.id));
      if (page['next_cursor'] === null) break;
      path = `/teams?limit=2&cursor=${encodeURIComponent(page['next_cursor'] as string)}`;
    }
    expect(seen).toEqual(await teamIds());
    expect(seen).toEqual([...seen].sort());
    for (const list of ['/teams', '/tokens', '/teams/ads/projects']) {
      const tooMany = await admin('GET', `${list}?limit=1001`);
      refused(tooMany, 422, 'validation_error', 'limit');
      expect(tooMany.body.detail?.[0]?.loc).toEqual(['query', 'limit']);
      refused(await admin('GET', `${list}?limit=zero`), 422, 'validation_error', 'limit');
      refused(await admin('GET', `${list}?cursor=%E2%9C%93not-ours`), 422, 'validation_error', 'cursor');
      conforms(list === '/teams' ? 'listTeams' : list === '/tokens' ? 'listTokens' : 'listProjects', await admin('GET', `${list}?limit=1000`));
    }
    refused(await admin('GET', '/tokens?colour=red'), 422, 'validation_error', 'colour');
  });
});
