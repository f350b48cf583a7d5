import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kysely, Migrator, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { request } from 'undici';
import { stringify } from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { generateSecret, hashSecret } from '../../src/access/token-secret.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../fake-upstreams/openai-upstream.js';
import { sparePort } from '../isolation/support/private-redis.js';
import { isolatedPostgresUrl } from '../support/postgres-url.js';
import { ReplicaProcess } from './support/replica-set.js';

const DATABASE_URL = process.env['TEST_DATABASE_URL'];
const REDIS_URL = process.env['TEST_REDIS_URL'];
/** The last migration of the release before workers and replicas (docs/deploy.md#upgrades). */
const RELEASE_BEFORE = '0009-request-log-indexes';

/**
 * Three `switchyard serve` processes started at the same moment on one PostgreSQL: the schema is
 * migrated by one of them while the others wait for it (kysely's migration lock), and a first
 * start makes one bootstrap token, not three (docs/deploy.md#upgrades).
 */
describe.skipIf(DATABASE_URL === undefined || REDIS_URL === undefined)('three replicas starting at once', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function startThree(databaseUrl: string): Promise<{ replicas: ReplicaProcess[]; upstream: FakeOpenAIUpstream }> {
    const upstream = await startFakeOpenAIUpstream();
    cleanups.push(() => upstream.close());
    const directory = mkdtempSync(join(tmpdir(), 'switchyard-upgrade-replicas-'));
    cleanups.push(() => rmSync(directory, { recursive: true, force: true }));
    const configPath = join(directory, 'switchyard.yaml');
    writeFileSync(
      configPath,
      stringify({
        server: { host: '127.0.0.1', port: 8080 },
        database: { url: databaseUrl },
        state: { url: REDIS_URL, key_prefix: `upgrade-replicas-${randomBytes(4).toString('hex')}:` },
        upstreams: [{ id: 'plain', provider: 'openai', base_url: upstream.url, api_key: 'sk-plain' }],
        models: [{ id: 'plain', type: 'chat', routes: [{ upstream: 'plain', model: 'gpt-4o-mini' }] }],
      }),
    );
    const replicas: ReplicaProcess[] = [];
    for (let number = 1; number <= 3; number++) replicas.push(new ReplicaProcess(number, await sparePort(), configPath));
    cleanups.push(async () => {
      await Promise.all(replicas.map((replica) => replica.stop()));
    });
    await Promise.all(replicas.map((replica) => replica.start()));
    return { replicas, upstream };
  }

  async function query<Row extends Record<string, unknown>>(url: string, text: string): Promise<Row[]> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query<Row>(text)).rows;
    } finally {
      await client.end();
    }
  }

  it('on the schema of the release before: one of them migrates, the others find it done, and all three serve', async () => {
    const database = await isolatedPostgresUrl(DATABASE_URL as string);
    cleanups.push(() => database.drop());
    // The release before, with its migrations run by kysely's Migrator as it ran them, and a token of its own.
    const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: database.url, max: 1 }) }) });
    const schema = (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema as string;
    const names = Object.keys(MIGRATIONS);
    const before = Object.fromEntries(Object.entries(MIGRATIONS).slice(0, names.indexOf(RELEASE_BEFORE) + 1));
    const { error } = await new Migrator({ db, provider: { getMigrations: async () => before }, migrationTableSchema: schema }).migrateToLatest();
    expect(error).toBeUndefined();
    const token = generateSecret('svc_');
    await sql`insert into tokens (id, name, team, project, secret_hash, display_prefix, scopes, models, created_at, expires_at, revoked_at)
      values ('tok_before', null, 'search', null, ${hashSecret(token)}, ${token.slice(0, 12)}, '["chat"]', null, ${Date.now()}, null, null)`.execute(db);
    await db.destroy();

    const { replicas } = await startThree(database.url);
    const said = replicas.map((replica) => replica.lines.map((line) => String(line['msg'])).filter((message) => message.startsWith('database schema')));
    const migrated = said.filter((messages) => messages.some((message) => message.startsWith('database schema migrated')));
    expect(migrated).toHaveLength(1);
    const pending = names.length - names.indexOf(RELEASE_BEFORE) - 1;
    expect(migrated[0]).toEqual([
      expect.stringMatching(new RegExp(`^database schema migrated: ${pending} migrations applied in \\d+ ms, now at ${names.at(-1)}$`)),
    ]);
    expect(said.filter((messages) => messages.length === 1 && messages[0] === `database schema up to date (${names.at(-1)})`)).toHaveLength(2);
    // Each migration ran once.
    const applied = await query<{ name: string }>(database.url, 'select name from kysely_migration order by name');
    expect(applied.map((row) => row.name)).toEqual(names);
    for (const replica of replicas) {
      const answer = await request(`${replica.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'plain', messages: [{ role: 'user', content: 'Hi' }] }),
      });
      await answer.body.text();
      expect(answer.statusCode).toBe(200);
    }
    // No bootstrap token on a database that had tokens.
    for (const replica of replicas) expect(replica.stderr).not.toContain('admin token:');
  });

  it('on an empty database: one bootstrap token, printed by one of them', async () => {
    const database = await isolatedPostgresUrl(DATABASE_URL as string);
    cleanups.push(() => database.drop());
    const { replicas } = await startThree(database.url);
    expect(replicas.filter((replica) => replica.stderr.includes('admin token:'))).toHaveLength(1);
    expect(await query(database.url, 'select id from tokens')).toHaveLength(1);
  });
});
