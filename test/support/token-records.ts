import type { TokenRecord } from '../../src/store/index.js';

/** A stored token of team `search` with every scope default, for store tests; its hash is derived from its id. */
export function tokenRecord(id: string, overrides: Partial<TokenRecord> = {}): TokenRecord {
  return {
    id,
    name: null,
    team: 'search',
    project: null,
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
