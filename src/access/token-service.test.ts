import { afterEach, beforeEach, expect, it } from 'vitest';
import { describeEachBackend } from '../../test/support/database-backends.js';
import { GatewayError } from '../errors/index.js';
import type { Stores } from '../store/index.js';
import { TeamService } from './team-service.js';
import { TokenService } from './token-service.js';

const NOW = 1_750_000_000_000;

async function refusal(call: Promise<unknown>): Promise<{ status: number; code: string; param: string | null; message: string }> {
  const error = await call.then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!(error instanceof GatewayError)) throw new Error(`expected a GatewayError, got ${String(error)}`);
  return { status: error.status, code: error.code, param: error.param, message: error.message };
}

describeEachBackend('TokenService', (backend) => {
  let stores: Stores;
  let dispose: () => Promise<void>;
  let changes: number;
  let tokens: TokenService;
  let teams: TeamService;

  beforeEach(async () => {
    ({ stores, dispose } = await backend.open());
    changes = 0;
    tokens = new TokenService(
      stores.tokens,
      'svc_',
      () => NOW,
      async () => {
        changes++;
      },
    );
    teams = new TeamService(stores.teams, () => NOW);
    await teams.createTeam({ id: 'search' });
    await teams.createProject('search', { id: 'ranker' });
    await teams.createTeam({ id: 'ads' });
    await teams.createProject('ads', { id: 'bidder' });
  });
  afterEach(async () => {
    await dispose();
  });

  it('creates a token with limits in an existing project, and makes a missing team (never a project)', async () => {
    const { record } = await tokens.create({ team: 'search', project: 'ranker', limits: { rpm: 60, usdPerDay: 1.25 }, expiresAt: NOW + 1_000 });
    expect(record).toMatchObject({ team: 'search', project: 'ranker', limits: { rpm: 60, usdPerDay: 1.25 }, expiresAt: NOW + 1_000 });
    expect((await stores.tokens.findById(record.id))?.limits).toEqual({ rpm: 60, usdPerDay: 1.25 });
    await tokens.create({ team: 'brand-new' });
    expect(await stores.teams.getTeam('brand-new')).toMatchObject({ id: 'brand-new' });
    expect(changes).toBe(2);
  });

  it('refuses bad input with 422 naming the field, and leaves no record behind', async () => {
    const cases: Array<[() => Promise<unknown>, string]> = [
      [() => tokens.create({ team: 'search', project: 'nope' }), 'project'],
      // A project of another team is an unknown project of this one.
      [() => tokens.create({ team: 'search', project: 'bidder' }), 'project'],
      // An unknown team with a project: the project cannot exist, and the team is not made.
      [() => tokens.create({ team: 'ghost', project: 'ranker' }), 'project'],
      [() => tokens.create({ team: ' ' }), 'team'],
      [() => tokens.create({ team: 'a/b' }), 'team'],
      [() => tokens.create({ team: 'search', limits: { rpm: 0 } }), 'limits.rpm'],
      [() => tokens.create({ team: 'search', limits: { tokensPerDay: 2.5 } }), 'limits.tokens_per_day'],
      [() => tokens.create({ team: 'search', limits: { usdPerMonth: -1 } }), 'limits.usd_per_month'],
      [() => tokens.create({ team: 'search', scopes: ['chat', 'fly'] }), 'scopes'],
      [() => tokens.create({ team: 'search', scopes: [] }), 'scopes'],
      [() => tokens.create({ team: 'search', models: [' '] }), 'models'],
      [() => tokens.create({ team: 'search', expiresInMs: 0 }), 'expires_in'],
      [() => tokens.create({ team: 'search', expiresAt: NOW - 1 }), 'expires_at'],
      [() => tokens.create({ team: 'search', expiresAt: NOW + 5, expiresInMs: 5 }), 'expires_at'],
    ];
    for (const [call, field] of cases) expect(await refusal(call())).toMatchObject({ status: 422, code: 'validation_error', param: field });
    expect(await stores.tokens.list()).toEqual([]);
    expect(await stores.teams.getTeam('ghost')).toBeNull();
    expect(changes).toBe(0);
  });

  it('changes limits (merged), scopes, models and expiry; refuses a revoked token (422) and an unknown one (404)', async () => {
    const { record } = await tokens.create({ team: 'search', limits: { rpm: 60, tpm: 1_000 }, models: ['a'] });
    const updated = await tokens.update(record.id, { limits: { rpm: null, maxConcurrent: 4 }, scopes: ['chat'], models: null, expiresInMs: 60_000 });
    expect(updated).toMatchObject({ limits: { tpm: 1_000, maxConcurrent: 4 }, scopes: ['chat'], models: null, expiresAt: NOW + 60_000 });
    expect((await tokens.update(record.id, { expiresAt: null })).expiresAt).toBeNull();
    expect(changes).toBe(3);
    expect(await refusal(tokens.update(record.id, { limits: { tpm: 0 } }))).toMatchObject({ status: 422, param: 'limits.tpm' });
    expect(await refusal(tokens.update(record.id, { scopes: ['root'] }))).toMatchObject({ status: 422, param: 'scopes' });
    expect(await refusal(tokens.update('tok_nope', { scopes: ['chat'] }))).toMatchObject({ status: 404, code: 'token_not_found', param: 'id' });
    await tokens.revoke(record.id);
    const revoked = await refusal(tokens.update(record.id, { limits: { rpm: 1 } }));
    expect(revoked).toMatchObject({ status: 422, code: 'validation_error', param: 'id' });
    expect(revoked.message).toContain(record.id);
    expect((await stores.tokens.findById(record.id))?.limits).toEqual({ tpm: 1_000, maxConcurrent: 4 });
  });

  it('refuses a model id the gateway does not serve (400 unknown_model), naming the close ones, on create and update', async () => {
    const checked = new TokenService(
      stores.tokens,
      'svc_',
      () => NOW,
      async () => undefined,
      () => ['gpt-4o-mini', 'gpt-4o', 'local-embed'],
    );
    const typo = await refusal(checked.create({ team: 'search', models: ['gpt-4o', 'gpt4o-mini'] }));
    expect(typo).toMatchObject({ status: 400, code: 'unknown_model', param: 'models' });
    expect(typo.message).toContain("'gpt4o-mini'");
    expect(typo.message).toContain("did you mean 'gpt-4o-mini'");
    expect(await stores.tokens.list()).toEqual([]);
    const far = await refusal(checked.create({ team: 'search', models: ['llama-3-70b'] }));
    expect(far.message).not.toContain('did you mean');
    expect(far.message).toContain('gpt-4o-mini');
    const { record } = await checked.create({ team: 'search', models: ['gpt-4o-mini', 'local-embed'] });
    expect(record.models).toEqual(['gpt-4o-mini', 'local-embed']);
    expect(await refusal(checked.update(record.id, { models: ['local-embedd'] }))).toMatchObject({ status: 400, code: 'unknown_model', param: 'models' });
    expect((await checked.update(record.id, { models: null })).models).toBeNull();
  });

  it('revokes once (404 for an unknown id), and lists in pages, by team and project', async () => {
    const made = [];
    for (const [team, project] of [
      ['search', 'ranker'],
      ['ads', null],
      ['search', null],
    ] as const)
      made.push((await tokens.create({ team, project })).record);
    expect((await tokens.revoke(made[0]?.id as string)).revokedAt).toBe(NOW);
    expect(await refusal(tokens.revoke('tok_nope'))).toMatchObject({ status: 404, code: 'token_not_found' });
    const first = await tokens.list({ limit: 2 });
    const second = await tokens.list({ limit: 2, cursor: first.nextCursor as string });
    expect([...first.data, ...second.data].map((record) => record.id).sort()).toEqual(made.map((record) => record.id).sort());
    expect(second.nextCursor).toBeNull();
    expect((await tokens.list({ team: 'search' })).data).toHaveLength(2);
    expect((await tokens.list({ team: 'search', project: 'ranker' })).data.map((record) => record.id)).toEqual([made[0]?.id]);
    expect(await refusal(tokens.list({ limit: 5_000 }))).toMatchObject({ status: 422, param: 'limit' });
    expect(await refusal(tokens.list({ cursor: 'bm9wZQ' }))).toMatchObject({ status: 422, param: 'cursor' });
  });
});
