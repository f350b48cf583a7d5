import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { describe } from 'vitest';
import { openStores, type Stores } from '../../src/store/index.js';
import { isolatedPostgresUrl } from './postgres-url.js';

export interface DatabaseBackend {
  name: 'sqlite' | 'postgres';
  /** False when this run has no server for it: its suites are declared and counted as skipped. */
  available: boolean;
  /** Opens a fresh, empty database; `dispose` drops everything it created. */
  open(): Promise<{ stores: Stores; url: string; schema?: string; dispose(): Promise<void> }>;
  /**
   * A database nothing has been written to, named by a URL a gateway process can open too (a
   * SQLite file, a PostgreSQL schema chosen in the URL); `dispose` removes it.
   */
  empty(): Promise<{ url: string; dispose(): Promise<void> }>;
}

const postgresUrl = process.env['TEST_DATABASE_URL'];

const sqliteBackend: DatabaseBackend = {
  name: 'sqlite',
  available: true,
  async open() {
    const url = 'sqlite::memory:';
    const stores = await openStores(url);
    return { stores, url, dispose: () => stores.close() };
  },
  async empty() {
    const directory = mkdtempSync(join(tmpdir(), 'switchyard-db-'));
    return { url: `sqlite:${join(directory, 'switchyard.db')}`, dispose: async () => rmSync(directory, { recursive: true, force: true }) };
  },
};

const postgresBackend: DatabaseBackend = {
  name: 'postgres',
  available: postgresUrl !== undefined && postgresUrl !== '',
  async open() {
    const url = postgresUrl as string;
    const schema = `switchyard_test_${randomBytes(6).toString('hex')}`;
    const stores = await openStores(url, { schema });
    return {
      stores,
      url,
      schema,
      async dispose() {
        await stores.close();
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        await client.query(`drop schema if exists ${schema} cascade`);
        await client.end();
      },
    };
  },
  async empty() {
    const { url, drop } = await isolatedPostgresUrl(postgresUrl as string);
    return { url, dispose: drop };
  },
};

/** Every database backend; PostgreSQL is available when TEST_DATABASE_URL is set, and skipped (and counted so) otherwise. */
export const DATABASE_BACKENDS: DatabaseBackend[] = [sqliteBackend, postgresBackend];

/**
 * Declares `suite` once per backend as `{name} on sqlite` and `{name} on postgres`: a backend this
 * run has no server for is still declared, skipped, so the run counts its tests as skipped.
 */
export function describeEachBackend(name: string, suite: (backend: DatabaseBackend) => void): void {
  for (const backend of DATABASE_BACKENDS) describe.skipIf(!backend.available)(`${name} on ${backend.name}`, () => suite(backend));
}
