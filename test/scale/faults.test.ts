import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { generateSecret, hashSecret } from '../../src/access/token-secret.js';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../fake-upstreams/openai-upstream.js';
import { postgresBinaries, PrivatePostgres } from '../isolation/support/private-postgres.js';
import { PrivateRedis, redisServerBinary } from '../isolation/support/private-redis.js';
import { FaultyProxy } from '../support/faulty-proxy.js';
import { parseExposition, total } from '../support/prometheus-text.js';
import { nginxBinary } from '../support/private-nginx.js';
import { cli } from '../support/run-cli.js';
import { adminCall, teamToken } from './support/admin-calls.js';
import { HealthChecker } from './support/health-checker.js';
import { startReplicaSet, type ReplicaProcess, type ReplicaSet } from './support/replica-set.js';
import { failed, startSteadyLoad, type LoadOutcome } from './support/steady-load.js';

/** How often each replica writes its queued request-log rows: what a `kill -9` may lose at most. */
const FLUSH_INTERVAL_MS = 200;
/** How long a slot of a process that died stays taken (`state.slot_lease`). */
const SLOT_LEASE_MS = 3_000;
/** How long Redis and PostgreSQL are down: as the issue has it. */
const OUTAGE_MS = 30_000;

/**
 * Three `switchyard serve` processes behind docs/deploy.md's nginx, over a Redis and a PostgreSQL
 * of the suite's own (never the machine's), under steady load while replicas, Redis and
 * PostgreSQL fail: what fails is only what the fault touched, and the request log loses nothing
 * it promised to keep.
 */
/** A process's resident memory, in KiB (Linux's /proc). */
function residentKiB(replica: ReplicaProcess): number {
  const status = readFileSync(`/proc/${replica.pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1]);
}

describe.skipIf(nginxBinary === undefined || redisServerBinary === undefined || postgresBinaries === undefined)('three replicas under faults', () => {
  let redis: PrivateRedis;
  let postgres: PrivatePostgres;
  let upstream: FakeOpenAIUpstream;
  /** The ordered pool's first and second credential, each a fake of its own. */
  let primary: FakeOpenAIUpstream;
  let backup: FakeOpenAIUpstream;
  /** Between the third replica and Redis: the link the partition cuts. */
  let link: FaultyProxy;
  let directory: string;
  let set: ReplicaSet;
  let checker: HealthChecker;
  let adminToken: string;
  let loadToken: string;
  let metricsToken: string;

  beforeAll(async () => {
    [redis, postgres] = await Promise.all([PrivateRedis.start(), PrivatePostgres.start()]);
    // Plain answers take 200 ms and streams about 1.3 s: a fault always finds requests under way.
    upstream = await startFakeOpenAIUpstream({ chunkDelayMs: 100, firstByteDelayMs: 200 });
    [primary, backup] = await Promise.all([startFakeOpenAIUpstream(), startFakeOpenAIUpstream()]);
    link = await FaultyProxy.inFrontOf(redis.url);
    directory = mkdtempSync(join(tmpdir(), 'switchyard-faults-'));
    const config = {
      server: { host: '127.0.0.1', port: 8080, drain_delay_ms: 1_000, shutdown_timeout_ms: 10_000, trusted_proxies: ['127.0.0.1'] },
      database: { url: postgres.url },
      state: { url: redis.url, key_prefix: 'faults:', slot_lease: `${SLOT_LEASE_MS / 1000}s` },
      request_log: { flush_interval_ms: FLUSH_INTERVAL_MS },
      upstreams: [
        { id: 'plain', provider: 'openai', base_url: upstream.url, api_key: 'sk-plain' },
        { id: 'session-a', provider: 'openai', base_url: upstream.url, api_key: 'sk-session-a' },
        { id: 'session-b', provider: 'openai', base_url: upstream.url, api_key: 'sk-session-b' },
        { id: 'session-c', provider: 'openai', base_url: upstream.url, api_key: 'sk-session-c' },
        { id: 'primary', provider: 'openai', base_url: primary.url, api_key: 'sk-primary' },
        { id: 'backup', provider: 'openai', base_url: backup.url, api_key: 'sk-backup' },
      ],
      models: [
        { id: 'plain', type: 'chat', routes: [{ upstream: 'plain', model: 'gpt-4o-mini' }] },
        { id: 'sessions', type: 'chat', routes: ['session-a', 'session-b', 'session-c'].map((id) => ({ upstream: id, model: 'gpt-4o-mini' })) },
        {
          id: 'ordered',
          type: 'chat',
          strategy: 'ordered',
          routes: [
            { upstream: 'primary', model: 'gpt-4o-mini', priority: 0 },
            { upstream: 'backup', model: 'gpt-4o-mini', priority: 1 },
          ],
        },
      ],
    };
    writeFileSync(join(directory, 'switchyard.yaml'), JSON.stringify(config));
    const configFlag = ['--config', join(directory, 'switchyard.yaml')];
    adminToken = (await cli('tokens', 'create', ...configFlag, '--team', 'ops', '--scopes', 'admin')).stdout.at(-1) as string;
    loadToken = (await cli('tokens', 'create', ...configFlag, '--team', 'load')).stdout.at(-1) as string;
    metricsToken = (await cli('tokens', 'create', ...configFlag, '--team', 'ops', '--scopes', 'metrics')).stdout.at(-1) as string;
    // The third replica reaches Redis through the link the partition test cuts.
    set = await startReplicaSet(directory, config, {
      environment: (number): Record<string, string> => (number === 3 ? { SWITCHYARD_STATE_URL: link.url } : {}),
    });
    checker = new HealthChecker(set);
    checker.start();
  }, 90_000);

  afterAll(async () => {
    await checker?.stop();
    await set?.close();
    await Promise.all([upstream?.close(), primary?.close(), backup?.close(), link?.close()]);
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

  const createToken = (team: string, limits: Record<string, number> = {}) => teamToken(set.url, adminToken, team, limits);

  /** One chat completion straight to a replica (or through nginx): its status, error code, id and the tokens it used. */
  async function chat(url: string, token: string, model = 'plain', headers: Record<string, string> = {}) {
    const answer = await request(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: `hi ${randomBytes(4).toString('hex')}` }] }),
    });
    const body = (await answer.body.json()) as { usage?: { total_tokens: number }; error?: { code: string } };
    return {
      status: answer.statusCode,
      code: body.error?.code ?? null,
      id: answer.headers['x-request-id'] as string,
      tokens: body.usage?.total_tokens ?? 0,
    };
  }

  /** A token written straight into the tokens table, with no revision bump or notification. */
  async function tokenUnannounced(team: string): Promise<string> {
    const secret = generateSecret('svc_');
    const client = new pg.Client({ connectionString: postgres.url });
    await client.connect();
    try {
      await client.query(
        'insert into tokens (id, name, team, project, secret_hash, display_prefix, scopes, models, created_at, expires_at, revoked_at, limits) values ($1, null, $2, null, $3, $4, $5, null, $6, null, null, null)',
        [`tok_${randomBytes(8).toString('hex')}`, team, hashSecret(secret), secret.slice(0, 12), JSON.stringify(['chat']), Date.now()],
      );
    } finally {
      await client.end();
    }
    return secret;
  }

  /** Request-log rows a replica holds in memory, waiting for the database (its gauge). */
  async function queuedRows(replica: ReplicaProcess): Promise<number> {
    const answer = await request(`${replica.url}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } });
    return total(parseExposition(await answer.body.text()), 'switchyard_request_log_queue_rows');
  }

  /** What the request log says a team spent, in tokens. */
  async function loggedTokens(team: string): Promise<number> {
    const client = new pg.Client({ connectionString: postgres.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ spent: string | null }>(
        'select sum(coalesce(prompt_tokens, 0) + coalesce(completion_tokens, 0)) as spent from request_logs where team = $1',
        [team],
      );
      return Number(rows[0]?.spent ?? 0);
    } finally {
      await client.end();
    }
  }

  /** Each replica's log lines at `level` since `from` (an index into its lines per replica). */
  function linesSince(from: readonly number[], level: number): string[][] {
    return set.replicas.map((replica, index) => replica.lines.slice(from[index]).flatMap((line) => (line['level'] === level ? [String(line['msg'])] : [])));
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
    const slotsToken = await createToken('slots', { max_concurrent: 2 });
    const victim = set.replicas[1] as ReplicaProcess;
    const others = set.replicas.filter((replica) => replica !== victim);
    // Back for the next tests, whatever this one found.
    onTestFinished(async () => {
      if (!victim.running) await victim.start();
      await vi.waitFor(() => expect(checker.inRotation(victim)).toBe(true), { timeout: 5_000, interval: 50 });
    });
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
    const servedElsewhere = new Set(others.flatMap((replica) => replica.accessLines().map((line) => String(line['requestId']))));
    for (const failure of failures) if (failure.requestId !== null) expect(servedElsewhere.has(failure.requestId)).toBe(false);
    const inFlightAtKill = outcomes.filter((outcome) => outcome.startedAt < diedAt && outcome.endedAt >= killedAt);
    for (const failure of failures) {
      expect(failure.startedAt).toBeLessThan(diedAt);
      expect(failure.endedAt).toBeGreaterThanOrEqual(killedAt);
    }
    expect(failures.length).toBeLessThanOrEqual(inFlightAtKill.length);

    // The log lost at most what the victim finished within its last flush interval: every answer
    // that ended earlier is in it, and so is every answer of the other replicas.
    const mustBeLogged = outcomes.filter(
      (outcome) =>
        outcome.status === 200 &&
        outcome.complete &&
        outcome.requestId !== null &&
        (outcome.endedAt < killedAt - FLUSH_INTERVAL_MS - 100 || servedElsewhere.has(outcome.requestId)),
    );
    const logged = await loggedIds();
    const lost = answeredIds(outcomes).filter((id) => !logged.has(id));
    console.log(`kill -9: ${failures.length} requests failed of ${inFlightAtKill.length} in flight; ${lost.length} answered requests not in the log`);
    await expectLogged(mustBeLogged.map((outcome) => outcome.requestId as string));
  }, 90_000);

  it('Redis stopped for 30 s and restarted empty: requests keep being served, sessions stay put by rendezvous hashing, one warning and one recovery line per replica, and the quotas rebuilt from the log are exact', async () => {
    const quotaToken = await createToken('redis-quota', { tokens_per_day: 100_000 });
    const spentBefore = (await chat(set.url, quotaToken)).tokens;
    expect(spentBefore).toBeGreaterThan(0);
    const from = set.replicas.map((replica) => replica.lines.length);
    const load = startSteadyLoad(set.url, loadToken, { perSecond: 10, streamEvery: 4, model: 'plain' });
    await sleep(500);
    await redis.stop();
    const sessionTurns: Array<{ status: number; id: string }> = [];
    const quotaAnswers: number[] = [];
    const outageEnds = performance.now() + OUTAGE_MS;
    while (performance.now() < outageEnds) {
      // A session's turns land on every replica in turn; with no Redis, each binds it by rendezvous hashing alike.
      for (const replica of set.replicas) {
        const turn = await chat(replica.url, loadToken, 'sessions', { 'x-session-id': 'outage-session' });
        sessionTurns.push({ status: turn.status, id: turn.id });
        quotaAnswers.push((await chat(replica.url, quotaToken)).status);
      }
      await sleep(1_000);
    }
    await redis.launch();
    // Each replica finds it again (a probe every second).
    await vi.waitFor(
      () => expect(linesSince(from, 30).map((lines) => lines.filter((message) => message.startsWith('shared state answers again')).length)).toEqual([1, 1, 1]),
      {
        timeout: 10_000,
        interval: 200,
      },
    );
    await sleep(1_000);
    const outcomes = await load.stop();
    expect(failed(outcomes)).toEqual([]);
    expect(sessionTurns.every((turn) => turn.status === 200)).toBe(true);
    expect(quotaAnswers.every((status) => status === 200)).toBe(true);
    // One warning per replica for the whole outage.
    const warnings = linesSince(from, 40);
    for (const lines of warnings) expect(lines.map((message) => message.split(';')[0])).toEqual(['shared state unreachable']);
    // The session stayed on one credential whichever replica served it.
    const credentials = new Set(
      set.replicas.flatMap((replica) =>
        replica.accessLines().flatMap((line) => (sessionTurns.some((turn) => turn.id === line['requestId']) ? [String(line['credential'])] : [])),
      ),
    );
    expect(credentials.size).toBe(1);
    await expectLogged([...answeredIds(outcomes), ...sessionTurns.map((turn) => turn.id)]);

    // Redis came back empty: the quota's counter is rebuilt from the request log, outage included.
    const spent = await loggedTokens('redis-quota');
    expect(spent).toBe(spentBefore * (1 + quotaAnswers.length));
    await adminCall(set.url, adminToken, 'PATCH', '/teams/redis-quota', { limits: { tokens_per_day: spent + 2 * spentBefore + 1 } });
    // Room for two more answers and a part of a third: the third passes, the fourth is refused, on any replica.
    const after: number[] = [];
    for (let index = 0; index < 5; index++) after.push((await chat((set.replicas[index % 3] as ReplicaProcess).url, quotaToken)).status);
    expect(after).toEqual([200, 200, 200, 429, 429]);
  }, 120_000);

  it('PostgreSQL stopped for 30 s: known tokens are served, a new one is refused 503 database_unavailable, and the rows wait in memory and are all written when it returns', async () => {
    // A token another process made a moment ago, whose change notification has not reached the
    // replicas (written here without one): they hold every token but this, and must ask the database.
    // Every replica first takes the changes announced so far (a token reload reads every row, this one's too).
    await sleep(1_000);
    for (const replica of set.replicas) expect((await chat(replica.url, loadToken)).status).toBe(200);
    const fresh = await tokenUnannounced('load');
    const rssBefore = set.replicas.map((replica) => residentKiB(replica));
    const load = startSteadyLoad(set.url, loadToken, { perSecond: 20, streamEvery: 4, model: 'plain' });
    await postgres.stop();
    const stoppedAt = performance.now();
    await sleep(2_000);
    const refused = await chat(set.url, fresh);
    expect({ status: refused.status, code: refused.code }).toEqual({ status: 503, code: 'database_unavailable' });
    let queuedAtMost = 0;
    while (performance.now() - stoppedAt < OUTAGE_MS) {
      const queued = await Promise.all(set.replicas.map((replica) => queuedRows(replica)));
      queuedAtMost = Math.max(queuedAtMost, ...queued);
      await sleep(1_000);
    }
    const rssDuring = set.replicas.map((replica) => residentKiB(replica));
    await postgres.launch();
    await sleep(1_000);
    const outcomes = await load.stop();
    expect(failed(outcomes)).toEqual([]);
    // About a third of 30 s × 20 requests a second waited on each replica, far below request_log.max_queue.
    expect(queuedAtMost).toBeGreaterThan(100);
    expect(queuedAtMost).toBeLessThan(100_000);
    // What they cost in memory, for docs/deploy.md: a few MiB per thousand rows at most.
    const grownKiB = rssDuring.map((during, index) => during - (rssBefore[index] as number));
    console.log(`PostgreSQL outage: at most ${queuedAtMost} rows queued on a replica; resident memory grew by ${grownKiB.join(', ')} KiB`);
    for (const grown of grownKiB) expect(grown).toBeLessThan(64 * 1024);
    await expectLogged(answeredIds(outcomes));
    expect((await chat(set.url, fresh)).status).toBe(200);
  }, 120_000);

  it('one replica partitioned from Redis keeps serving, and catches up when the link returns', async () => {
    const partitioned = set.replicas[2] as ReplicaProcess;
    const [first] = set.replicas as [ReplicaProcess];
    const from = set.replicas.map((replica) => replica.lines.length);
    expect((await chat(partitioned.url, loadToken, 'ordered')).status).toBe(200);
    link.cut();
    const during: number[] = [];
    for (let index = 0; index < 10; index++) {
      during.push((await chat(partitioned.url, loadToken, 'plain')).status);
      await sleep(300);
    }
    // Meanwhile another replica puts the first credential in cooldown; the partitioned one cannot hear it.
    primary.failNext({
      status: 429,
      headers: { 'retry-after': '120' },
      body: { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } },
    });
    expect((await chat(first.url, loadToken, 'ordered')).status).toBe(200);
    expect(during.every((status) => status === 200)).toBe(true);
    link.restore();
    // Once it answers again, the replica adopts the cooldown: it sends nothing more to the first credential.
    await vi.waitFor(() => expect(linesSince(from, 30)[2]?.some((message) => message.startsWith('shared state answers again'))).toBe(true), {
      timeout: 10_000,
      interval: 200,
    });
    await sleep(1_000);
    const before = primary.requests.length;
    for (let index = 0; index < 5; index++) expect((await chat(partitioned.url, loadToken, 'ordered')).status).toBe(200);
    expect(primary.requests.length).toBe(before);
  }, 60_000);
});
