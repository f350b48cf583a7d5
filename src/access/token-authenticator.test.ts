import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { GatewayError } from '../errors/index.js';
import { openStores, type Stores, type TokenChangeWatcher, type TokenStore } from '../store/index.js';
import { TokenAuthenticator } from './token-authenticator.js';
import { TokenService } from './token-service.js';

/** A watcher that never reports a change: as if another process's notification were late. */
const silentWatcher: TokenChangeWatcher = { takeChange: () => false, close: async () => undefined };

let stores: Stores;
let lookups: number;
let countingStore: TokenStore;

beforeEach(async () => {
  stores = await openStores('sqlite::memory:');
  lookups = 0;
  countingStore = Object.assign(Object.create(stores.tokens) as TokenStore, {
    findBySecretHash: (hash: string) => {
      lookups++;
      return stores.tokens.findBySecretHash(hash);
    },
  });
});
afterEach(async () => {
  await stores.close();
});

async function codeOf(result: unknown): Promise<string> {
  try {
    await result;
  } catch (error) {
    return (error as GatewayError).code;
  }
  return 'accepted';
}

describe('TokenAuthenticator', () => {
  it('accepts a token created elsewhere before the change notification arrives', async () => {
    const authenticator = new TokenAuthenticator(countingStore, silentWatcher, 'svc_');
    await authenticator.load();
    // Created through another service: this authenticator is not told.
    const { secret, record } = await new TokenService(stores.tokens, 'svc_').create({ team: 'late' });
    const principal = await authenticator.authenticate(`Bearer ${secret}`);
    expect(principal.tokenId).toBe(record.id);
    expect(lookups).toBe(1);
    // Now cached: no further look-up.
    expect((authenticator.authenticate(`Bearer ${secret}`) as { tokenId: string }).tokenId).toBe(record.id);
    expect(lookups).toBe(1);
  });

  it('looks a made-up token up once, then refuses it from memory', async () => {
    const authenticator = new TokenAuthenticator(countingStore, silentWatcher, 'svc_');
    await authenticator.load();
    const madeUp = `Bearer svc_${'Z'.repeat(43)}`;
    expect(await codeOf(authenticator.authenticate(madeUp))).toBe('invalid_api_key');
    expect(await codeOf(authenticator.authenticate(madeUp))).toBe('invalid_api_key');
    expect(lookups).toBe(1);
  });

  it('caps database look-ups for unknown tokens at 50 a second', async () => {
    let now = 1_000_000;
    const authenticator = new TokenAuthenticator(countingStore, silentWatcher, 'svc_', () => now);
    await authenticator.load();
    const attempts = Array.from({ length: 80 }, (_, index) => `Bearer svc_${String(index).padStart(43, 'Q')}`);
    const codes = await Promise.all(attempts.map((header) => codeOf(authenticator.authenticate(header))));
    expect(codes.every((code) => code === 'invalid_api_key')).toBe(true);
    expect(lookups).toBe(50);
    now += 1_000;
    await codeOf(authenticator.authenticate(`Bearer svc_${'N'.repeat(43)}`));
    expect(lookups).toBe(51);
  });

  it('still refuses a revoked token found by look-up', async () => {
    const authenticator = new TokenAuthenticator(countingStore, silentWatcher, 'svc_');
    await authenticator.load();
    const service = new TokenService(stores.tokens, 'svc_');
    const { secret, record } = await service.create({ team: 'gone' });
    await service.revoke(record.id);
    expect(await codeOf(authenticator.authenticate(`Bearer ${secret}`))).toBe('revoked_api_key');
  });

  it('while the database is away, answers from the tokens it holds and reads the change again once it is back', async () => {
    let now = 1_000_000;
    let changed = false;
    const watcher: TokenChangeWatcher = {
      takeChange: () => {
        const was = changed;
        changed = false;
        return was;
      },
      close: async () => undefined,
    };
    let away = false;
    const flakyStore = Object.assign(Object.create(stores.tokens) as TokenStore, {
      list: () => (away ? Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })) : stores.tokens.list()),
    });
    const errors: unknown[] = [];
    const service = new TokenService(stores.tokens, 'svc_');
    const { secret, record } = await service.create({ team: 'kept' });
    const authenticator = new TokenAuthenticator(
      flakyStore,
      watcher,
      'svc_',
      () => now,
      undefined,
      (error) => errors.push(error),
    );
    await authenticator.load();
    // Revoked by another process, which says so; the database goes away before it is read.
    await service.revoke(record.id);
    changed = true;
    away = true;
    expect(await codeOf(authenticator.authenticate(`Bearer ${secret}`))).toBe('accepted');
    expect(errors).toHaveLength(1);
    away = false;
    now += 1_000;
    // The watcher says nothing more: the failed reload is tried again on its own.
    expect(await codeOf(authenticator.authenticate(`Bearer ${secret}`))).toBe('revoked_api_key');
  });
});
