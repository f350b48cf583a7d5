import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { TeamService, TokenService } from '../../src/access/index.js';
import { openStores } from '../../src/store/index.js';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../fake-upstreams/openai-upstream.js';
import { FaultyProxy } from '../support/faulty-proxy.js';
import { admittedEverywhereWithin, chat, Replica, type Answer } from './support/limits-crash-replicas.js';
import { PrivateRedis, redisServerBinary } from './support/private-redis.js';

/** The suite's `state.slot_lease`: the documented bound on how long a slot outlives its request. */
const SLOT_LEASE_MS = 3_000;
/** The default `request_log.flush_interval_ms`: the documented bound on the rows a crash loses. */
const FLUSH_INTERVAL_MS = 200;
/** What a loaded 2-core machine adds to either bound: a late timer, a batch being written, a reconnection. */
const MARGIN_MS = 1_000;
const ROW_MARGIN_MS = 200;

/**
 * Gateway replicas over a private Redis and one SQLite file, crashed (`kill -9`) and cut from
 * Redis: a slot among a team's requests in flight never outlives its request by more than the
 * slot lease, whatever happens to the replica that took it; a team's quota counted in Redis
 * survives a crash and restart of the replica that admitted its requests; and a crash loses only
 * the request-log rows of the last flush interval.
 */
describe.skipIf(redisServerBinary === undefined)('caller limits when a replica crashes or loses Redis', () => {
  let redis: PrivateRedis;
  let proxy: FaultyProxy;
  let fast: FakeOpenAIUpstream;
  let slow: FakeOpenAIUpstream;
  let directory: string;
  let database: string;
  /** Replica A reaches Redis through the proxy (cut in one test); B directly. */
  let configA: string;
  let replicaA: Replica;
  let replicaB: Replica;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    proxy = await FaultyProxy.start(redis.port);
    fast = await startFakeOpenAIUpstream();
    slow = await startFakeOpenAIUpstream();
    slow.options = { firstByteDelayMs: 1_500 };
    directory = mkdtempSync(join(tmpdir(), 'switchyard-limits-crash-'));
    database = join(directory, 'switchyard.db');
    const config = (stateUrl: string): string =>
      stringify({
        server: { host: '127.0.0.1', port: 0, shutdown_timeout_ms: 500 },
        database: { url: `sqlite:${database}` },
        state: { url: stateUrl, key_prefix: 'crash:', slot_lease: `${SLOT_LEASE_MS}ms` },
        logging: { access: false },
        upstreams: [
          { id: 'fast', provider: 'openai', base_url: fast.url, api_key: 'sk-upstream' },
          { id: 'slow', provider: 'openai', base_url: slow.url, api_key: 'sk-upstream' },
        ],
        models: [
          { id: 'fast', type: 'chat', routes: [{ upstream: 'fast', model: 'gpt-4o-mini' }] },
          { id: 'slow', type: 'chat', routes: [{ upstream: 'slow', model: 'gpt-4o-mini' }] },
        ],
      });
    configA = join(directory, 'replica-a.yaml');
    const configB = join(directory, 'replica-b.yaml');
    writeFileSync(configA, config(proxy.proxied(redis.url)));
    writeFileSync(configB, config(redis.url));
    // Teams and tokens exist before the replicas start, so both load their limits at once.
    const stores = await openStores(`sqlite:${database}`);
    try {
      const teams = new TeamService(stores.teams);
      const tokenService = new TokenService(stores.tokens, 'svc_');
      // Each answer of the fake upstream uses 17 tokens: 850 is 50 requests' worth.
      const teamLimits = {
        cut: { maxConcurrent: 2, rpm: 1_000 },
        crash: { maxConcurrent: 3, rpm: 1_000 },
        long: { maxConcurrent: 1, rpm: 1_000 },
        'cut-quota': { tokensPerDay: 1_000 },
        quota: { tokensPerDay: 850 },
        rows: {},
      };
      for (const [team, limits] of Object.entries(teamLimits)) {
        await teams.createTeam({ id: team, limits });
        tokens[team] = (await tokenService.create({ team })).secret;
      }
    } finally {
      await stores.close();
    }
    [replicaA, replicaB] = await Promise.all([Replica.start(configA), Replica.start(configB)]);
  }, 30_000);

  afterAll(async () => {
    await Promise.all([replicaA?.stop(), replicaB?.stop()]);
    await proxy?.close();
    await redis?.close();
    await fast?.close();
    await slow?.close();
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
  });

  const urls = (): string[] => [replicaA.url, replicaB.url];

  it('a replica cut from Redis while its requests end: the team is admitted again on every replica within the slot lease', async () => {
    const token = tokens['cut'] as string;
    const held = [chat(replicaA.url, token, 'slow'), chat(replicaA.url, token, 'slow')];
    await delay(400);
    expect(await chat(replicaB.url, token)).toMatchObject({ status: 429, code: 'rate_limit_exceeded' });
    proxy.cut();
    // Both end while A cannot reach Redis: their settlements fail.
    expect((await Promise.all(held)).map((answer) => answer.status)).toEqual([200, 200]);
    const ended = performance.now();
    await delay(1_000);
    proxy.restore();
    const tookMs = await admittedEverywhereWithin(urls(), token, SLOT_LEASE_MS + MARGIN_MS);
    expect(tookMs, `slots still held ${SLOT_LEASE_MS + MARGIN_MS} ms after their requests ended`).not.toBeNull();
    expect(performance.now() - ended).toBeLessThan(SLOT_LEASE_MS + MARGIN_MS + 1_000);
  }, 20_000);

  it('usage settled while its replica was cut from Redis is counted once it is back: the quota is not handed out again', async () => {
    const token = tokens['cut-quota'] as string;
    // Three requests of 300 prompt tokens each, which reserve ~16 each at admission: their
    // settlements carry ~870 tokens of a quota of 1,000.
    slow.options = { firstByteDelayMs: 1_500, promptUsage: { prompt_tokens: 300, cached_tokens: 0 } };
    try {
      const held = [0, 1, 2].map(() => chat(replicaA.url, token, 'slow'));
      await delay(400);
      proxy.cut();
      expect((await Promise.all(held)).map((answer) => answer.status)).toEqual([200, 200, 200]);
      await delay(1_000);
      proxy.restore();
      // A's reconnection (at most 2 s apart) and its retry (backoff at most 2 s).
      await delay(4_500);
    } finally {
      slow.options = { firstByteDelayMs: 1_500 };
    }
    let admitted = 0;
    for (let tries = 0; tries < 70; tries++) {
      const answer = await chat(replicaB.url, token);
      if (answer.status !== 200) {
        expect(answer.code).toBe('quota_exceeded');
        break;
      }
      admitted++;
    }
    // 17 tokens each: 900 tokens of prompts already spent leave room for at most 6 more.
    expect(3 * 300 + admitted * 17, `${admitted} more requests admitted`).toBeLessThanOrEqual(1_000 + 17);
  }, 20_000);

  it("kill -9 of a replica holding a team's slots: they are free on the other replica within the slot lease", async () => {
    const token = tokens['crash'] as string;
    const held = [0, 1, 2].map(() => chat(replicaA.url, token, 'slow').catch(() => null));
    await delay(400);
    expect(await chat(replicaB.url, token)).toMatchObject({ status: 429, code: 'rate_limit_exceeded' });
    await replicaA.crash();
    const crashed = performance.now();
    await Promise.all(held);
    try {
      const tookMs = await admittedEverywhereWithin([replicaB.url], token, SLOT_LEASE_MS + MARGIN_MS);
      expect(tookMs, `slots of the dead replica still held ${SLOT_LEASE_MS + MARGIN_MS} ms after it died`).not.toBeNull();
      expect(performance.now() - crashed).toBeLessThan(SLOT_LEASE_MS + MARGIN_MS + 1_000);
    } finally {
      replicaA = await Replica.start(configA);
    }
  }, 20_000);

  it('a request that lasts longer than the slot lease keeps its slot until it ends (the heartbeat renews it)', async () => {
    const token = tokens['long'] as string;
    slow.options = { firstByteDelayMs: 2 * SLOT_LEASE_MS + 500 };
    try {
      const held = chat(replicaA.url, token, 'slow');
      await delay(2 * SLOT_LEASE_MS);
      expect(await chat(replicaB.url, token)).toMatchObject({ status: 429, code: 'rate_limit_exceeded' });
      expect(await chat(replicaA.url, token)).toMatchObject({ status: 429, code: 'rate_limit_exceeded' });
      expect((await held).status).toBe(200);
      expect(await admittedEverywhereWithin(urls(), token, MARGIN_MS)).not.toBeNull();
    } finally {
      slow.options = { firstByteDelayMs: 1_500 };
    }
  }, 20_000);

  it("a quota of 50 requests' tokens: kill -9 and a restart of the replica that admitted 30 of them lets through 50 in all, not more", async () => {
    const token = tokens['quota'] as string;
    const answers: Answer[] = [];
    for (let index = 0; index < 30; index++) answers.push(await chat(replicaA.url, token));
    // Their settlements go out at once (within a few ms; 100 leaves room for a loaded CI machine, where
    // 20 once lost one); their rows wait for the log's next flush, every 200 ms.
    await delay(100);
    await replicaA.crash();
    replicaA = await Replica.start(configA);
    for (let index = 0; index < 40; index++) answers.push(await chat(urls()[index % 2] as string, token));
    const admitted = answers.filter((answer) => answer.status === 200).length;
    expect(answers.filter((answer) => answer.status !== 200).every((answer) => answer.code === 'quota_exceeded')).toBe(true);
    expect(admitted).toBe(50);
  }, 20_000);

  it(`kill -9 loses only the rows of requests that ended in the last flush interval (${FLUSH_INTERVAL_MS} ms)`, async () => {
    const token = tokens['rows'] as string;
    // A fresh process, so that the log's timer started a known moment ago: the crash comes 600 ms
    // after the one-second tick an interval of 1 s would have, and right after a tick of 200 ms.
    await replicaA.stop();
    replicaA = await Replica.start(configA);
    const ready = performance.now();
    const ended: Array<{ requestId: string; at: number }> = [];
    while (performance.now() - ready < 1_600) {
      const answer = await chat(replicaA.url, token);
      expect(answer.status).toBe(200);
      ended.push({ requestId: answer.requestId as string, at: performance.now() });
      await delay(15);
    }
    await replicaA.crash();
    const crashed = performance.now();
    replicaA = await Replica.start(configA);
    const stores = await openStores(`sqlite:${database}`);
    let written: Set<string>;
    try {
      written = new Set((await stores.requestSearch.search({ team: 'rows' }, { limit: 1_000 })).map((row) => row.id));
    } finally {
      await stores.close();
    }
    const lost = ended.filter((request) => !written.has(request.requestId));
    const oldestLostMs = Math.max(0, ...lost.map((request) => crashed - request.at));
    expect(oldestLostMs, `${lost.length} of ${ended.length} rows lost, the oldest ended ${Math.round(oldestLostMs)} ms before the crash`).toBeLessThan(
      FLUSH_INTERVAL_MS + ROW_MARGIN_MS,
    );
  }, 20_000);
});
