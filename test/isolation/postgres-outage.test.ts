import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, onTestFailed, onTestFinished, vi } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import { startFaultUpstream, type FaultUpstream } from '../fake-upstreams/fault-upstream.js';
import { PrivatePostgres, postgresBinaries } from './support/private-postgres.js';
import { stringify } from 'yaml';
import { startStoreGateway, type StoreGateway } from './support/store-gateway.js';

const WARN = 40;

async function loggedIds(url: string, ids: readonly string[]): Promise<Set<string>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string }>('select id from request_logs where id = any($1)', [ids]);
    return new Set(rows.map((row) => row.id));
  } finally {
    await client.end();
  }
}

/** Chat requests one after the other for `ms`; their request ids. */
async function traffic(gateway: StoreGateway, ms: number): Promise<string[]> {
  const ids: string[] = [];
  const until = performance.now() + ms;
  while (performance.now() < until) {
    const answer = await gateway.chat();
    expect(answer.status).toBe(200);
    ids.push(answer.id);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return ids;
}

describe.skipIf(postgresBinaries === undefined)('PostgreSQL going away under a serving gateway', () => {
  let postgres: PrivatePostgres;
  let upstream: FaultUpstream;
  beforeAll(async () => {
    upstream = await startFaultUpstream();
    postgres = await PrivatePostgres.start();
  }, 60_000);
  afterAll(async () => {
    await postgres?.close();
    await upstream?.close();
  });

  it('restarted: one warning per kind of failure per interval, no "bug" line nor client dump, and every row written once it is back', async () => {
    // A timeout names only the test: the step it was in, and how long each took, say where.
    const steps: string[] = [];
    let began = performance.now();
    const step = (name: string) => {
      const now = performance.now();
      steps.push(`${name} (${Math.round(now - began)} ms)`);
      began = now;
    };
    onTestFailed(() => console.error(`postgres outage, steps done: ${steps.join('; ') || 'none'}`));
    const gateway = await startStoreGateway(postgres.url, upstream.url);
    onTestFinished(() => gateway.close());
    step('gateway started');
    const before = await traffic(gateway, 300);
    const linesBefore = gateway.rawLines.length;

    await postgres.stop();
    step('PostgreSQL stopped');
    const during = await traffic(gateway, 4_000);
    step('traffic during the outage');
    await postgres.launch();
    step('PostgreSQL launched');
    const after = await traffic(gateway, 500);
    step('traffic once it was back');

    const outageLines = gateway.lines.slice(linesBefore).filter((line) => (line['level'] as number) >= WARN);
    // 4 s of outage: one line per kind of failure (request-log write, token watcher, lost connections,
    // accounts poll; 4 measured), not one per request (over 100 here).
    expect(during.length).toBeGreaterThan(100);
    expect(outageLines.length, JSON.stringify(outageLines.map((line) => line['msg']))).toBeLessThanOrEqual(8);
    const raw = gateway.rawLines.join('\n');
    expect(raw).not.toMatch(/uncaught exception|unhandled promise rejection/);
    expect(raw).not.toMatch(/secretKey|processID/);
    const ids = [...before, ...during, ...after];
    await vi.waitFor(
      async () => {
        const logged = await loggedIds(postgres.url, ids);
        expect(ids.filter((id) => !logged.has(id))).toEqual([]);
      },
      { timeout: 8_000, interval: 200 },
    );
    step('every row written');
    expect(await gateway.stop()).toBe(0);
  }, 60_000);

  it('stopped or hanging: the admin API answers 503 database_unavailable, within the statement timeout while it hangs', async () => {
    const gateway = await startStoreGateway(postgres.url, upstream.url, {
      database: { url: postgres.url, statement_timeout_ms: 1_000, connect_timeout_ms: 1_000 },
    });
    onTestFinished(() => gateway.close());
    expect((await gateway.admin('/admin/v1/teams')).status).toBe(200);

    await postgres.stop();
    const stopped = await gateway.admin('/admin/v1/teams');
    await postgres.launch();
    expect(stopped).toMatchObject({ status: 503, code: 'database_unavailable' });
    expect((await gateway.admin('/admin/v1/teams')).status).toBe(200);

    await postgres.pause();
    const hanging = await Promise.all([gateway.admin('/admin/v1/teams'), gateway.admin('/admin/v1/tokens'), gateway.admin('/admin/v1/requests')]).finally(() =>
      postgres.resume(),
    );
    for (const answer of hanging) {
      expect(answer).toMatchObject({ status: 503, code: 'database_unavailable' });
      // 1 s of statement timeout and 1 s of grace for an answer that never comes.
      expect(answer.ms).toBeLessThan(4_000);
    }
    expect((await gateway.admin('/admin/v1/teams')).status).toBe(200);
    expect(gateway.rawLines.join('\n')).not.toMatch(/uncaught exception|unhandled error/);
    expect(await gateway.stop()).toBe(0);
  }, 60_000);

  it('down at start: serve fails naming database.url, its password masked, and the cause', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'switchyard-pg-down-'));
    onTestFinished(() => rmSync(directory, { recursive: true, force: true }));
    const configPath = join(directory, 'switchyard.yaml');
    const url = `postgres://postgres:hunter2secret@127.0.0.1:${postgres.port}/postgres`;
    writeFileSync(
      configPath,
      stringify({ server: { host: '127.0.0.1', port: 0 }, database: { url, connect_timeout_ms: 2_000 }, logging: { level: 'silent' } }),
    );
    await postgres.stop();
    const stderr: string[] = [];
    const status = await runCli(['serve', '--config', configPath], { stdout: () => undefined, stderr: (line) => stderr.push(line) }).finally(() =>
      postgres.launch(),
    );
    expect(status).not.toBe(0);
    const said = stderr.join('\n');
    expect(said).toContain(`database.url: cannot reach PostgreSQL at postgres://postgres:***@127.0.0.1:${postgres.port}/postgres: connect ECONNREFUSED`);
    expect(said).not.toContain('hunter2secret');
  }, 30_000);
});
