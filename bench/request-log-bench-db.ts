import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';

/**
 * What the request-log benches use of the built gateway (`npm run build` → dist/): its own store,
 * migrations and admin queries, so the figures are those of the code that ships. The bench is
 * compiled on its own (rootDir bench/), hence these few structural types instead of src imports.
 */

export interface SeedRow {
  id: string;
  clientRequestId: string | null;
  createdAt: number;
  tokenId: string | null;
  team: string | null;
  project: string | null;
  endpoint: string;
  model: string | null;
  upstream: string | null;
  upstreamModel: string | null;
  sessionId: string | null;
  status: number;
  latencyMs: number;
  ttfbMs: number | null;
  promptTokens: number | null;
  completionTokens: number | null;
  cachedTokens: number | null;
  reasoningTokens: number | null;
  costUsd: number | null;
  usageSource: 'upstream' | 'estimated' | 'none' | null;
  errorCode: string | null;
  sessionSource: string | null;
  affinity: string | null;
  attempts: ReadonlyArray<{ credential: string; outcome: string; status: number | null; ms: number }> | null;
}

export interface ListAnswer {
  data: Array<{ id: string }>;
  next_cursor: string | null;
}

export interface BuiltQueries {
  list(query: Record<string, unknown>): Promise<ListAnswer>;
  get(id: string): Promise<{ id: string }>;
  session(id: string, query: Record<string, unknown>): Promise<{ turns: unknown[] }>;
  usage(query: Record<string, unknown>): Promise<{ data: unknown[] }>;
}

export interface BuiltStores {
  database: {
    dialect: 'sqlite' | 'postgres';
    sqlite: { exec(sql: string): unknown; prepare(sql: string): { all(...values: unknown[]): unknown[]; get(...values: unknown[]): unknown } } | null;
  };
  requestLogs: { insertBatch(rows: readonly SeedRow[]): Promise<void>; count(): Promise<number> };
  requestSearch: unknown;
  close(): Promise<void>;
}

interface StoreModule {
  openStores(url: string): Promise<BuiltStores>;
}

interface QueriesModule {
  RequestQueries: new (search: unknown) => BuiltQueries;
}

/** The model the seed gives 0.05% of requests: a filter without an index of its own at its worst. */
export const RARE_MODEL = 'legacy-davinci';

export const say = (text: string) => process.stderr.write(`${text}\n`);

const root = resolve(import.meta.dirname, '..');

/** A module of the built gateway (`npm run build` → dist/), by its path under dist/. */
export async function built<T>(path: string): Promise<T> {
  const file = join(root, 'dist', path);
  if (!existsSync(file)) throw new Error(`${file} is missing: run npm run build first`);
  return (await import(pathToFileURL(file).href)) as T;
}

export async function openBuiltStores(url: string): Promise<BuiltStores> {
  return (await built<StoreModule>('store/index.js')).openStores(url);
}

export async function builtQueries(stores: BuiltStores): Promise<BuiltQueries> {
  const { RequestQueries } = await built<QueriesModule>('admin/request-queries.js');
  return new RequestQueries(stores.requestSearch);
}

/** `--name value` from the command line. */
export function option(argv: readonly string[], name: string): string | undefined {
  const index = argv.indexOf(`--${name}`);
  return index === -1 ? undefined : argv[index + 1];
}

/** `sqlite:PATH` as is; `postgres://…/NAME`: the database is created when missing (the seed fills a database of its own). */
export async function prepareDatabase(url: string): Promise<void> {
  if (url.startsWith('sqlite:')) return;
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`database name "${name}": expected lower-case letters, digits and _`);
  const maintenance = new URL(url);
  maintenance.pathname = '/postgres';
  const client = new pg.Client({ connectionString: maintenance.toString() });
  await client.connect();
  try {
    const exists = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (exists.rowCount === 0) {
      say(`creating database ${name}`);
      await client.query(`create database ${name}`);
    }
  } finally {
    await client.end();
  }
}

/** PostgreSQL: fresh statistics after a bulk load, as autovacuum would make them a little later. */
export async function analyze(url: string): Promise<void> {
  if (url.startsWith('sqlite:')) return;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('vacuum analyze request_logs');
  } finally {
    await client.end();
  }
}
