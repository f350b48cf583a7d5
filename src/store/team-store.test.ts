import { afterEach, beforeEach, expect, it } from 'vitest';
import { sql } from 'kysely';
import { describeEachBackend } from '../../test/support/database-backends.js';
import { tokenRecord } from '../../test/support/token-records.js';
import type { Stores, TokenRecord } from './index.js';

const token = (id: string, team: string, project: string | null, overrides: Partial<TokenRecord> = {}): TokenRecord =>
  tokenRecord(id, { team, project, ...overrides });

describeEachBackend('teams and projects', (backend) => {
  let stores: Stores;
  let dispose: () => Promise<void>;

  beforeEach(async () => {
    ({ stores, dispose } = await backend.open());
  });

  afterEach(async () => {
    await dispose();
  });

  it('keeps teams and projects with their limits; a token names its team into being, never its project', async () => {
    const { teams, tokens } = stores;
    expect(await teams.insertTeam({ id: 'search', name: 'Search', limits: { rpm: 600, tokensPerMonth: 5_000_000 }, createdAt: 1, updatedAt: 1 })).toBe(true);
    expect(await teams.insertTeam({ id: 'search', name: 'again', limits: {}, createdAt: 2, updatedAt: 2 })).toBe(false);
    expect(await teams.getTeam('search')).toEqual({
      id: 'search',
      name: 'Search',
      limits: { rpm: 600, tokensPerMonth: 5_000_000 },
      createdAt: 1,
      updatedAt: 1,
    });
    expect(await teams.insertProject({ team: 'search', id: 'ranker', name: 'Ranker', limits: { maxConcurrent: 4 }, createdAt: 3, updatedAt: 3 })).toBe(true);
    expect(await teams.insertProject({ team: 'nobody', id: 'x', name: 'x', limits: {}, createdAt: 3, updatedAt: 3 })).toBeNull();
    expect(await teams.getTeam('nobody')).toBeNull();
    expect(await teams.updateTeam('search', { limits: { tpm: 100_000 } }, 9)).toMatchObject({ name: 'Search', limits: { tpm: 100_000 }, updatedAt: 9 });
    expect(await teams.updateProject('search', 'ranker', { name: 'The ranker' }, 10)).toMatchObject({
      team: 'search',
      name: 'The ranker',
      limits: { maxConcurrent: 4 },
    });
    expect(await teams.updateTeam('nobody', { name: 'x' }, 1)).toBeNull();

    // A token for a team nobody created makes it, as `tokens create --team` always has; a project it never makes.
    expect(await tokens.insert(token('tok_new', 'ads', null))).toBe(true);
    expect(await teams.getTeam('ads')).toMatchObject({ id: 'ads', name: 'ads', limits: {} });
    expect(await tokens.insert(token('tok_bidder', 'ads', 'bidder', { secretHash: 'b'.repeat(64) }))).toBe(false);
    expect(await tokens.insert(token('tok_other', 'nobody', 'bidder', { secretHash: 'c'.repeat(64) }))).toBe(false);
    // A project of another team is no project of this one.
    expect(await tokens.insert(token('tok_ranker', 'ads', 'ranker', { secretHash: 'd'.repeat(64) }))).toBe(false);
    expect((await teams.listProjects('ads')).map((project) => project.id)).toEqual([]);
    expect(await teams.getTeam('nobody')).toBeNull();
    expect((await tokens.list()).map((record) => record.id)).toEqual(['tok_new']);
    expect((await teams.listTeams()).map((team) => team.id)).toEqual(['ads', 'search']);
  });

  it('merges limit changes, pages lists by id, and bumps the tokens revision on every team and project write', async () => {
    const { teams, tokens } = stores;
    const revision = () => tokens.readRevision();
    let last = await revision();
    const bumped = async (expected: boolean) => {
      const now = await revision();
      expect(now > last, `revision bumped: ${String(expected)}`).toBe(expected);
      last = now;
    };
    expect(await teams.insertTeam({ id: 'b', name: 'B', limits: { rpm: 10, tpm: 20 }, createdAt: 1, updatedAt: 1 })).toBe(true);
    await bumped(true);
    expect(await teams.insertTeam({ id: 'b', name: 'B', limits: {}, createdAt: 1, updatedAt: 1 })).toBe(false);
    await bumped(false);
    expect((await teams.updateTeam('b', { limits: { rpm: null, usdPerDay: 2.5 } }, 5))?.limits).toEqual({ tpm: 20, usdPerDay: 2.5 });
    await bumped(true);
    expect(await teams.updateTeam('missing', { name: 'x' }, 5)).toBeNull();
    await bumped(false);
    expect(await teams.insertProject({ team: 'b', id: 'p', name: 'P', limits: {}, createdAt: 1, updatedAt: 1 })).toBe(true);
    await bumped(true);
    expect(await teams.insertProject({ team: 'missing', id: 'p', name: 'P', limits: {}, createdAt: 1, updatedAt: 1 })).toBeNull();
    await bumped(false);
    expect((await teams.updateProject('b', 'p', { limits: { maxConcurrent: 3 } }, 6))?.limits).toEqual({ maxConcurrent: 3 });
    await bumped(true);
    // What the token cache carries: those with limits only (not team a), projects keyed by `team/project`.
    expect(await teams.listLimits()).toEqual({ teams: new Map([['b', { tpm: 20, usdPerDay: 2.5 }]]), projects: new Map([['b/p', { maxConcurrent: 3 }]]) });
    expect(await teams.getProject('b', 'p')).toMatchObject({ limits: { maxConcurrent: 3 }, updatedAt: 6 });
    expect(await teams.deleteProject('b', 'p', 7)).toEqual({ deleted: true, liveTokens: [] });
    await bumped(true);
    for (const id of ['a', 'c', 'd']) await teams.insertTeam({ id, name: id, limits: {}, createdAt: 1, updatedAt: 1 });
    expect((await teams.listTeams({ limit: 2 })).map((team) => team.id)).toEqual(['a', 'b']);
    expect((await teams.listTeams({ limit: 2, after: 'b' })).map((team) => team.id)).toEqual(['c', 'd']);
    last = await revision();
    expect(await teams.deleteTeam('d', 7)).toEqual({ deleted: true, liveTokens: [] });
    await bumped(true);
  });

  it('refuses to delete a team or project with live tokens, naming them, and deletes one without', async () => {
    const { teams, tokens } = stores;
    const now = 1_800_000_000_000;
    await teams.insertTeam({ id: 'search', name: 'Search', limits: {}, createdAt: 1, updatedAt: 1 });
    await teams.insertProject({ team: 'search', id: 'ranker', name: 'Ranker', limits: {}, createdAt: 1, updatedAt: 1 });
    await tokens.insert(token('tok_live', 'search', 'ranker'));
    await tokens.insert(token('tok_revoked', 'search', null, { revokedAt: now - 1 }));
    await tokens.insert(token('tok_expired', 'search', 'ranker', { expiresAt: now - 1 }));
    expect(await teams.deleteTeam('search', now)).toEqual({ deleted: false, liveTokens: ['tok_live'] });
    expect(await teams.deleteProject('search', 'ranker', now)).toEqual({ deleted: false, liveTokens: ['tok_live'] });
    expect(await teams.getTeam('search')).not.toBeNull();
    await tokens.revoke('tok_live', now - 1);
    expect(await teams.deleteProject('search', 'ranker', now)).toEqual({ deleted: true, liveTokens: [] });
    expect(await teams.deleteTeam('search', now)).toEqual({ deleted: true, liveTokens: [] });
    expect(await teams.getTeam('search')).toBeNull();
    expect(await teams.deleteTeam('search', now)).toBeNull();
  });

  it('gives every token of an older database its team and project as records when migrated', async () => {
    // The records of the migration's backfill, as it would have made them: the tokens' own.
    const { database } = stores;
    await sql`delete from projects`.execute(database.db);
    await sql`delete from teams`.execute(database.db);
    await sql`insert into tokens (id, team, project, secret_hash, display_prefix, scopes, created_at) values ('tok_old', 'legacy', 'app', ${'f'.repeat(64)}, 'svc_', '["chat"]', 5)`.execute(
      database.db,
    );
    const { up } = await import('./migrations/0007-teams-and-projects.js');
    await sql`drop table projects`.execute(database.db);
    await sql`drop table teams`.execute(database.db);
    await up(database.db as unknown as Parameters<typeof up>[0]);
    expect(await stores.teams.getTeam('legacy')).toMatchObject({ id: 'legacy', name: 'legacy', createdAt: 5 });
    expect(await stores.teams.getProject('legacy', 'app')).toMatchObject({ team: 'legacy', id: 'app' });
  });
});
