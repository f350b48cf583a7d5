import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../fake-upstreams/openai-upstream.js';
import { postgresBinaries, PrivatePostgres } from '../isolation/support/private-postgres.js';
import { PrivateRedis, redisServerBinary } from '../isolation/support/private-redis.js';
import { nginxBinary } from '../support/private-nginx.js';
import { cli } from '../support/run-cli.js';
import { HealthChecker } from './support/health-checker.js';
import { startReplicaSet, type ReplicaProcess, type ReplicaSet } from './support/replica-set.js';
import { failed, startSteadyLoad, type LoadOutcome } from './support/steady-load.js';

/** How often each replica writes its queued request-log rows: what a `kill -9` may lose at most. */
const FLUSH_INTERVAL_MS = 200;
/** How long a slot of a process that died stays taken (`state.slot_lease`). */
const SLOT_LEASE_MS = 3_000;

/**
 * Three `switchyard serve` processes behind docs/deploy.md's nginx, over a Redis and a PostgreSQL
 * of the suite's own (never the machine's), under steady load while replicas, Redis and
 * PostgreSQL fail: what fails is only what the fault touched, and the request log loses nothing
 * it promised to keep.
 */
describe.skipIf(nginxBinary === undefined || redisServerBinary === undefined || postgresBinaries === undefined)('three replicas under faults', () => {
  let redis: PrivateRedis;
  let postgres: PrivatePostgres;
  let upstream: FakeOpenAIUpstream;
  let directory: string;
  let set: ReplicaSet;
  let checker: HealthChecker;
  let adminToken: string;
  let loadToken: string;

  beforeAll(async () => {
    [redis, postgres] = await Promise.all([PrivateRedis.start(), PrivatePostgres.start()]);
    // Plain answers take 200 ms and streams about 1.3 s: a fault always finds requests under way.
    upstream = await startFakeOpenAIUpstream({ chunkDelayMs: 100, firstByteDelayMs: 200 });
    directory = mkdtempSync(join(tmpdir(), 'switchyard-faults-'));
    const config = {
      server: { host: '127.0.0.1', port: 8080, drain_delay_ms: 1_000, shutdown_timeout_ms: 10_000, trusted_proxies: ['127.0.0.1'] },
      database: { url: postgres.url },
      state: { url: redis.url, key_prefix: 'faults:', slot_lease: `${SLOT_LEASE_MS / 1000}s` },
      request_log: { flush_interval_ms: FLUSH_INTERVAL_MS },
      upstreams: [{ id: 'plain', provider: 'openai', base_url: upstream.url, api_key: 'sk-plain' }],
      models: [{ id: 'plain', type: 'chat', routes: [{ upstream: 'plain', model: 'gpt-4o-mini' }] }],
    };
    writeFileSync(join(directory, 'switchyard.yaml'), JSON.stringify(config));
    const configFlag = ['--config', join(directory, 'switchyard.yaml')];
    adminToken = (await cli('tokens', 'create', ...configFlag, '--team', 'ops', '--scopes', 'admin')).stdout.at(-1) as string;
    loadToken = (await cli('tokens', 'create', ...configFlag, '--team', 'load')).stdout.at(-1) as string;
    set = await startReplicaSet(directory, config);
    checker = new HealthChecker(set);
    checker.start();
  }, 90_000);

  afterAll(async () => {
    await checker?.stop();
    await set?.close();
    await upstream?.close();
    await Promise.all([redis?.close(), postgres?.close()]);
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
  });

  /** The ids of the request log's rows. */
  async function loggedIds(): Promise<Set<string>> {
    const client = new pg.Client({ connectionString: postgres.url });
    await client.connect();
    try {
      return new Set((await client.query<{ id: string }>('select id from request_logs')).rows.map((row) => row.id));
    } finally {
      await client.end();
    }
  }

  /** Waits until every id is in the request log. */
  async function expectLogged(ids: Iterable<string>): Promise<void> {
    const wanted = [...ids];
    await vi.waitFor(
      async () => {
        const logged = await loggedIds();
        expect(wanted.filter((id) => !logged.has(id))).toEqual([]);
      },
      { timeout: 10_000, interval: 250 },
    );
  }

  function answeredIds(outcomes: readonly LoadOutcome[]): string[] {
    return outcomes.flatMap((outcome) => (outcome.status === 200 && outcome.complete && outcome.requestId !== null ? [outcome.requestId] : []));
  }

  it('rolling restart: SIGTERM one replica at a time under steady load, streams included: no request fails, no row is lost', async () => {
    const load = startSteadyLoad(set.url, loadToken, { perSecond: 20, streamEvery: 4, model: 'plain' });
    await sleep(1_000);
    for (const replica of set.replicas) {
      const served = replica.accessLines().length;
      expect(await replica.stop('SIGTERM')).toBe(0);
      // It served while the load balancer moved away, and drained what it had.
      expect(replica.lines.some((line) => line['msg'] === 'shutdown complete')).toBe(true);
      expect(replica.accessLines().length).toBeGreaterThan(served);
      await replica.start();
      await vi.waitFor(() => expect(checker.inRotation(replica)).toBe(true), { timeout: 5_000, interval: 50 });
      await sleep(1_000);
    }
    const outcomes = await load.stop();
    expect(outcomes.length).toBeGreaterThan(150);
    expect(failed(outcomes)).toEqual([]);
    expect(outcomes.filter((outcome) => outcome.stream).length).toBeGreaterThan(30);
    await expectLogged(answeredIds(outcomes));
  }, 90_000);

  it('kill -9 of a replica under load: only its own requests in flight fail, its slots come free within the lease, and the log loses at most its last flush interval', async () => {
    // A team whose every slot is held by streams on the replica about to die.
    await request(`${set.url}/admin/v1/teams`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'slots', limits: { max_concurrent: 2 } }),
    }).then((answer) => answer.body.text());
    const slotsToken = (
      (await (
        await request(`${set.url}/admin/v1/tokens`, {
          method: 'POST',
          headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
          body: JSON.stringify({ team: 'slots', scopes: ['chat'] }),
        })
      ).body.json()) as { secret: string }
    ).secret;
    const victim = set.replicas[1] as ReplicaProcess;
    const others = set.replicas.filter((replica) => replica !== victim);
    const load = startSteadyLoad(set.url, loadToken, { perSecond: 20, streamEvery: 4, model: 'plain' });
    const holders = [0, 1].map(() =>
      request(`${victim.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${slotsToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'plain', stream: true, messages: [{ role: 'user', content: 'hold' }] }),
      }).then(
        (answer) =>
          answer.body.text().then(
            () => 'ended',
            () => 'cut',
          ),
        () => 'refused',
      ),
    );
    await sleep(1_000);
    const killedAt = performance.now();
    const killedAtEpoch = Date.now();
    await victim.stop('SIGKILL');
    // A request nginx sent while the process was dying reached it too: it is one of its own.
    const diedAt = performance.now();
    expect(await Promise.all(holders)).toEqual(['cut', 'cut']);
    // Its slots are still taken: the team is at its limit on every other replica…
    const slotsAnswer = async (replica: ReplicaProcess) => {
      const answer = await request(`${replica.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${slotsToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'plain', messages: [{ role: 'user', content: 'again' }] }),
      });
      await answer.body.text();
      return answer.statusCode;
    };
    expect(await slotsAnswer(others[0] as ReplicaProcess)).toBe(429);
    // …until their lease ends.
    await vi.waitFor(async () => expect(await slotsAnswer(others[0] as ReplicaProcess)).toBe(200), { timeout: SLOT_LEASE_MS + 3_000, interval: 250 });
    expect(performance.now() - killedAt).toBeLessThan(SLOT_LEASE_MS + 3_000);
    await sleep(1_000);
    const outcomes = await load.stop();

    // What failed was under way on the victim when it died, and nothing else.
    const failures = failed(outcomes);
    const inFlightAtKill = outcomes.filter((outcome) => outcome.startedAt < diedAt && outcome.endedAt >= killedAt);
    for (const failure of failures) {
      expect(failure.startedAt).toBeLessThan(diedAt);
      expect(failure.endedAt).toBeGreaterThanOrEqual(killedAt);
    }
    expect(failures.length).toBeLessThanOrEqual(inFlightAtKill.length);
    const servedElsewhere = new Set(others.flatMap((replica) => replica.accessLines().map((line) => String(line['requestId']))));
    for (const failure of failures) if (failure.requestId !== null) expect(servedElsewhere.has(failure.requestId)).toBe(false);

    // The log lost at most what the victim finished within its last flush interval.
    const lostAllowed = new Set(
      victim
        .accessLines()
        .filter((line) => (line['time'] as number) >= killedAtEpoch - FLUSH_INTERVAL_MS - 100)
        .map((line) => String(line['requestId'])),
    );
    await expectLogged(answeredIds(outcomes).filter((id) => !lostAllowed.has(id)));
    await victim.start();
    await vi.waitFor(() => expect(checker.inRotation(victim)).toBe(true), { timeout: 5_000, interval: 50 });
  }, 90_000);
});
