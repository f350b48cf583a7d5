import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { DATABASE_BACKENDS } from '../../test/support/database-backends.js';
import type { Stores, TokenRecord } from './index.js';

function token(id: string, team: string, project: string | null, overrides: Partial<TokenRecord> = {}): TokenRecord {
  return {
    id,
    name: null,
    team,
    project,
    secretHash: id.padEnd(64, '0'),
    displayPrefix: 'svc_abcd',
    scopes: ['chat'],
    models: null,
    createdAt: 1_700_000_000_000,
    expiresAt: null,
    revokedAt: null,
    limits: {},
    ...overrides,
  };
}

for (const backend of DATABASE_BACKENDS) {
  describe.skipIf(!backend.available)(`teams and projects on ${backend.name}`, () => {
    let stores: Stores;
    let dispose: () => Promise<void>;

    beforeEach(async () => {
      ({ stores, dispose } = await backend.open());
    });

    afterEach(async () => {
      await dispose();
    });

    it('keeps teams and projects with their limits, and a token names its team and project into being', async () => {
      const { teams, tokens } = stores;
      expect(await teams.insertTeam({ id: 'search', name: 'Search', limits: { rpm: 600, tokensPerMonth: 5_000_000 }, createdAt: 1, updatedAt: 1 })).toBe(true);
      expect(await teams.insertTeam({ id: 'search', name: 'again', limits: {}, createdAt: 2, updatedAt: 2 })).toBe(false);
      expect(await teams.getTeam('search')).toEqual({ id: 'search', name: 'Search', limits: { rpm: 600, tokensPerMonth: 5_000_000 }, createdAt: 1, updatedAt: 1 });
      expect(await teams.insertProject({ team: 'search', id: 'ranker', name: 'Ranker', limits: { maxConcurrent: 4 }, createdAt: 3, updatedAt: 3 })).toBe(true);
      await expect(teams.insertProject({ team: 'nobody', id: 'x', name: 'x', limits: {}, createdAt: 3, updatedAt: 3 })).rejects.toThrow('no team nobody');
      expect(await teams.updateTeam('search', { limits: { tpm: 100_000 } }, 9)).toMatchObject({ name: 'Search', limits: { tpm: 100_000 }, updatedAt: 9 });
      expect(await teams.updateProject('search', 'ranker', { name: 'The ranker' }, 10)).toMatchObject({ team: 'search', name: 'The ranker', limits: { maxConcurrent: 4 } });
      expect(await teams.updateTeam('nobody', { name: 'x' }, 1)).toBeNull();

      // A token for a team and project nobody created makes them, as `tokens create --team` always has.
      await tokens.insert(token('tok_new', 'ads', 'bidder'));
      expect(await teams.getTeam('ads')).toMatchObject({ id: 'ads', name: 'ads', limits: {} });
      expect((await teams.listProjects('ads')).map((project) => project.id)).toEqual(['bidder']);
      expect((await teams.listTeams()).map((team) => team.id)).toEqual(['ads', 'search']);
    });

    it('refuses to delete a team or project with live tokens, naming them, and deletes one without', async () => {
      const { teams, tokens } = stores;
      const now = 1_800_000_000_000;
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
      await sql`insert into tokens (id, team, project, secret_hash, display_prefix, scopes, created_at) values ('tok_old', 'legacy', 'app', ${'f'.repeat(64)}, 'svc_', '["chat"]', 5)`.execute(database.db);
      const { up } = await import('./migrations/0007-teams-and-projects.js');
      await sql`drop table projects`.execute(database.db);
      await sql`drop table teams`.execute(database.db);
      await up(database.db as unknown as Parameters<typeof up>[0]);
      expect(await stores.teams.getTeam('legacy')).toMatchObject({ id: 'legacy', name: 'legacy', createdAt: 5 });
      expect(await stores.teams.getProject('legacy', 'app')).toMatchObject({ team: 'legacy', id: 'app' });
    });
  });
}
