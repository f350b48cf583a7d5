import { afterEach, beforeEach, expect, it } from 'vitest';
import { describeEachBackend } from '../../test/support/database-backends.js';
import { tokenRecord } from '../../test/support/token-records.js';
import type { Stores, TokenRecord } from './index.js';

const token = (id: string, createdAt: number, overrides: Partial<TokenRecord> = {}): TokenRecord => tokenRecord(id, { createdAt, ...overrides });

describeEachBackend('token store writes', (backend) => {
  let stores: Stores;
  let dispose: () => Promise<void>;

  beforeEach(async () => {
    ({ stores, dispose } = await backend.open());
  });
  afterEach(async () => {
    await dispose();
  });

  it('changes a live token (limits merged), bumps the revision, and refuses a revoked one without writing', async () => {
    const { tokens } = stores;
    await tokens.insert(token('tok_a', 1, { limits: { rpm: 5, tpm: 100 } }));
    const start = await tokens.readRevision();
    const changed = await tokens.update('tok_a', {
      scopes: ['chat', 'embeddings'],
      models: ['m'],
      expiresAt: 99,
      name: 'ci',
      limits: { rpm: null, tokensTotal: 7 },
    });
    expect(changed).toMatchObject({
      id: 'tok_a',
      scopes: ['chat', 'embeddings'],
      models: ['m'],
      expiresAt: 99,
      name: 'ci',
      limits: { tpm: 100, tokensTotal: 7 },
    });
    expect(await tokens.findById('tok_a')).toEqual(changed);
    expect(await tokens.readRevision()).toBe(start + 1);
    expect(await tokens.update('tok_missing', { name: 'x' })).toBeNull();
    await tokens.revoke('tok_a', 50);
    const revision = await tokens.readRevision();
    expect(await tokens.update('tok_a', { name: 'after' })).toBe('revoked');
    expect((await tokens.findById('tok_a'))?.name).toBe('ci');
    expect(await tokens.readRevision()).toBe(revision);
  });

  it('inserts a first token once, however many ask at the same time, and never when a token exists', async () => {
    const { tokens } = stores;
    const attempts = await Promise.all(
      Array.from({ length: 6 }, (_, index) => tokens.insertFirst(token(`tok_first_${index}`, 1, { team: 'admin', secretHash: `hash-first-${index}` }))),
    );
    expect(attempts.filter((inserted) => inserted)).toHaveLength(1);
    expect(await tokens.list()).toHaveLength(1);
    expect(await tokens.insertFirst(token('tok_late', 2, { team: 'admin', secretHash: 'hash-late' }))).toBe(false);
    expect(await tokens.list()).toHaveLength(1);
  });

  it('pages tokens in creation order, filtered by team and project', async () => {
    const { tokens, teams } = stores;
    await teams.insertTeam({ id: 'ads', name: 'Ads', limits: {}, createdAt: 1, updatedAt: 1 });
    await teams.insertProject({ team: 'ads', id: 'bidder', name: 'Bidder', limits: {}, createdAt: 1, updatedAt: 1 });
    // Two tokens made in the same millisecond are ordered by id.
    for (const [id, at, team, project] of [
      ['tok_3', 3, 'search', null],
      ['tok_1', 1, 'ads', 'bidder'],
      ['tok_2b', 2, 'ads', null],
      ['tok_2a', 2, 'search', null],
    ] as const) {
      expect(await tokens.insert(token(id, at, { team, project }))).toBe(true);
    }
    const ids = (records: TokenRecord[]) => records.map((record) => record.id);
    expect(ids(await tokens.listPage({ limit: 2 }))).toEqual(['tok_1', 'tok_2a']);
    expect(ids(await tokens.listPage({ limit: 2, after: { createdAt: 2, id: 'tok_2a' } }))).toEqual(['tok_2b', 'tok_3']);
    expect(ids(await tokens.listPage({ limit: 10, team: 'ads' }))).toEqual(['tok_1', 'tok_2b']);
    expect(ids(await tokens.listPage({ limit: 10, team: 'ads', project: 'bidder' }))).toEqual(['tok_1']);
  });

  it('keeps the first revocation time of two concurrent ones, and bumps the revision once', async () => {
    const { tokens } = stores;
    await tokens.insert(token('tok_a', 1));
    const start = await tokens.readRevision();
    expect(await Promise.all([tokens.revoke('tok_a', 10), tokens.revoke('tok_a', 20)])).toEqual([true, true]);
    expect([10, 20]).toContain((await tokens.findById('tok_a'))?.revokedAt);
    expect(await tokens.readRevision()).toBe(start + 1);
  });

  it('writes nothing when a token cannot be inserted: no team is left behind by a refused project or a duplicate secret', async () => {
    const { tokens, teams } = stores;
    expect(await tokens.insert(token('tok_a', 1, { team: 'fresh', project: 'missing' }))).toBe(false);
    expect(await teams.getTeam('fresh')).toBeNull();
    await tokens.insert(token('tok_b', 1, { team: 'first' }));
    await expect(tokens.insert(token('tok_c', 1, { team: 'second', secretHash: 'tok_b'.padEnd(64, '0') }))).rejects.toThrow();
    expect(await teams.getTeam('second')).toBeNull();
    expect((await tokens.list()).map((record) => record.id)).toEqual(['tok_b']);
  });

  it('never leaves a token without its team when the team is deleted at the same time', async () => {
    const { tokens, teams } = stores;
    await teams.insertTeam({ id: 'racy', name: 'racy', limits: {}, createdAt: 1, updatedAt: 1 });
    const outcomes = await Promise.all([tokens.insert(token('tok_race', 5, { team: 'racy' })), teams.deleteTeam('racy', 10)]);
    const team = await teams.getTeam('racy');
    // Either the deletion saw the token and was refused, or it went first and the token made the team again.
    if (outcomes[1]?.deleted === true) expect(team).not.toBeNull();
    else expect(outcomes[1]).toEqual({ deleted: false, liveTokens: ['tok_race'] });
    expect(team).not.toBeNull();
  });
});
