import { afterEach, beforeEach, expect, it } from 'vitest';
import { describeEachBackend } from '../../test/support/database-backends.js';
import type { Stores, UpstreamAccountRecord } from './index.js';

function account(id: string, overrides: Partial<UpstreamAccountRecord> = {}): UpstreamAccountRecord {
  return {
    id,
    provider: 'codex',
    settings: { base_url: 'https://example.test/codex' },
    sealedDocument: 'sealed-1',
    createdAt: 1_700_000_000_000,
    updatedAt: 1_700_000_000_000,
    ...overrides,
  };
}

describeEachBackend('upstream accounts', (backend) => {
  let stores: Stores;
  let dispose: () => Promise<void>;

  beforeEach(async () => {
    ({ stores, dispose } = await backend.open());
  });

  afterEach(async () => {
    await dispose();
  });

  it('adds, lists, updates and removes accounts, each change a new revision', async () => {
    const accounts = stores.upstreamAccounts;
    const start = await accounts.readRevision();
    expect(await accounts.insert(account('chatgpt-a'))).toBe(true);
    expect(await accounts.insert(account('chatgpt-a', { sealedDocument: 'other' }))).toBe(false);
    expect(await accounts.insert(account('chatgpt-b', { createdAt: 1_700_000_000_001, updatedAt: 1_700_000_000_001 }))).toBe(true);
    expect(await accounts.readRevision()).toBe(start + 2);
    expect((await accounts.list()).map((record) => record.id)).toEqual(['chatgpt-a', 'chatgpt-b']);
    expect(await accounts.get('chatgpt-a')).toEqual(account('chatgpt-a'));

    expect(await accounts.updateDocument('chatgpt-a', 'sealed-2', 1_700_000_000_500)).toBe(true);
    expect(await accounts.get('chatgpt-a')).toMatchObject({ sealedDocument: 'sealed-2', updatedAt: 1_700_000_000_500 });
    expect(await accounts.updateDocument('missing', 'sealed', 1)).toBe(false);
    expect(await accounts.readRevision()).toBe(start + 3);

    expect(await accounts.remove('chatgpt-b')).toBe(true);
    expect(await accounts.remove('chatgpt-b')).toBe(false);
    expect(await accounts.get('chatgpt-b')).toBeNull();
    expect(await accounts.readRevision()).toBe(start + 4);
  });
});
