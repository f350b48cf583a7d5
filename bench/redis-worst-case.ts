import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';

/**
 * Redis's own CPU a request costs in the limits' worst case: the token, its project and its team
 * each carry every rate limit and quota (24 meters), and no meter has room taken in advance (a
 * holder near its limits, or one with a request now and then), so every request's admission
 * charges all 24 meters in Redis and its settlement 21 (tokens, dollars and the slot), each alone.
 * The meters are the ones CallerLimits builds (`planMinute`, `settlementMeters`), sent through the
 * built RedisState to a private `redis-server` (pinned to the last core where `taskset` exists),
 * so nothing else shares its CPU count. `npm run bench:redis [-- --requests N --in-flight 1,16,64]`.
 */

const { values: options } = parseArgs({
  options: {
    requests: { type: 'string', default: '4000' },
    'in-flight': { type: 'string', default: '1,16,64' },
    'redis-server': { type: 'string', default: process.env['TEST_REDIS_SERVER'] ?? 'redis-server' },
  },
});
const REQUESTS = Number(options.requests);
const IN_FLIGHT = (options['in-flight'] ?? '1').split(',').map(Number);
const WARM_UP = 300;
const SLOT_LEASE_MS = 30_000;
const RESERVED_TOKENS = 500;
const USED_TOKENS = 420;

/** What the bench uses of the built gateway (`npm run build` → dist/). */
interface PlannedMeter {
  key: string;
  group: string;
  quantity: 'requests' | 'tokens' | 'usd' | 'slots';
  limit: number;
  ttlMs: number;
  needsSeed: boolean;
}
interface Meter {
  key: string;
  group?: string;
  amount: number;
  limit: number | null;
  ttlMs: number;
  slot?: string;
  seed?: number;
  needsSeed?: boolean;
}
interface ChargeOutcome {
  refused: number;
  missing: number[];
}
interface BuiltState {
  charge(meters: readonly Meter[]): Promise<ChargeOutcome>;
  close(): Promise<void>;
}
interface LimitPlanModule {
  planMinute(holders: readonly object[], now: number, leaseMs: number): { entries: PlannedMeter[] };
  settlementMeters(entries: readonly PlannedMeter[], requestId: string, reservedTokens: number, usedTokens: number, costUsd: number): Meter[];
}
interface StateModule {
  RedisState: { open(url: string): Promise<BuiltState> };
}

async function built<T>(path: string): Promise<T> {
  const file = join(resolve(import.meta.dirname, '..'), 'dist', path);
  if (!existsSync(file)) throw new Error(`${file} is missing: run npm run build first`);
  return (await import(pathToFileURL(file).href)) as T;
}
const { planMinute, settlementMeters } = await built<LimitPlanModule>('access/limit-plan.js');
const { RedisState } = await built<StateModule>('state/index.js');

const limits = { rpm: 1e9, tpm: 1e12, maxConcurrent: 1e6, tokensPerDay: 1e12, tokensPerMonth: 1e12, tokensTotal: 1e12, usdPerDay: 1e9, usdPerMonth: 1e9 };
const holders = [
  { kind: 'token', key: 'token:tok_bench', label: 'token tok_bench', match: { tokenId: 'tok_bench' }, limits },
  { kind: 'project', key: 'project:bench/ranker', label: 'project "ranker"', match: { team: 'bench', project: 'ranker' }, limits },
  { kind: 'team', key: 'team:bench', label: 'team "bench"', match: { team: 'bench' }, limits },
];

/** The admission CallerLimits sends when no meter has room: every meter, each with its limit (quotas seeded, as after their first request). */
function admission(planned: readonly PlannedMeter[], requestId: string): Meter[] {
  return planned.map((entry) => ({
    key: entry.key,
    group: entry.quantity === 'slots' ? undefined : entry.group,
    amount: entry.quantity === 'tokens' ? RESERVED_TOKENS : entry.quantity === 'usd' ? 0 : 1,
    limit: entry.limit,
    ttlMs: entry.ttlMs,
    slot: entry.quantity === 'slots' ? requestId : undefined,
    needsSeed: entry.needsSeed,
    seed: entry.needsSeed ? 0 : undefined,
  }));
}

async function sparePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  if (address === null || typeof address === 'string') throw new Error('no spare port');
  return address.port;
}

async function startRedis(port: number): Promise<ChildProcess> {
  const core = Math.max(0, availableParallelism() - 1);
  const redisArguments = ['--port', String(port), '--save', '', '--appendonly', 'no'];
  const pinned = spawn('taskset', ['-c', String(core), options['redis-server'] ?? 'redis-server', ...redisArguments], { stdio: 'ignore' });
  const failed = await Promise.race([once(pinned, 'error').then(() => true), sleep(300).then(() => false)]);
  if (!failed) return pinned;
  const plain = spawn(options['redis-server'] ?? 'redis-server', redisArguments, { stdio: 'ignore' });
  await sleep(300);
  return plain;
}

async function redisCpuSeconds(client: Redis): Promise<number> {
  const info = await client.info('cpu');
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? Number.NaN);
  return field('used_cpu_user') + field('used_cpu_sys');
}

/** Calls and microseconds a call of each command Redis ran since the last reset. */
async function commandStats(client: Redis): Promise<{ calls: number; scriptUs: number }> {
  const info = await client.info('commandstats');
  let calls = 0;
  let scriptUs = 0;
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    if (match[1] === 'info' || match[1] === 'config') continue;
    calls += Number(match[2]);
    if (match[1] === 'evalsha' || match[1] === 'eval') scriptUs += Number(match[3]);
  }
  return { calls, scriptUs };
}

const port = await sparePort();
const server = await startRedis(port);
const url = `redis://127.0.0.1:${port}`;
const probe = new Redis(url);
const state = await RedisState.open(url);
try {
  const rows: string[] = [];
  for (const inFlight of IN_FLIGHT) {
    const plan = planMinute(holders, Date.now(), SLOT_LEASE_MS);
    let next = 0;
    const one = async (index: number): Promise<void> => {
      const requestId = `req-${inFlight}-${index}`;
      const outcome = await state.charge(admission(plan.entries, requestId));
      if (outcome.refused !== -1 || outcome.missing.length > 0) throw new Error(`the worst case must admit every request: ${JSON.stringify(outcome)}`);
      await state.charge(settlementMeters(plan.entries, requestId, RESERVED_TOKENS, USED_TOKENS, 0.0012));
    };
    const run = async (count: number): Promise<void> => {
      next = 0;
      await Promise.all(
        Array.from({ length: inFlight }, async () => {
          while (next < count) await one(next++);
        }),
      );
    };
    await run(WARM_UP);
    await probe.config('RESETSTAT');
    const before = await redisCpuSeconds(probe);
    await run(REQUESTS);
    const cpuUs = ((await redisCpuSeconds(probe)) - before) * 1e6;
    const { calls, scriptUs } = await commandStats(probe);
    rows.push(
      `| ${inFlight} | ${(cpuUs / REQUESTS).toFixed(1)} | ${(scriptUs / REQUESTS).toFixed(1)} | ${(calls / REQUESTS).toFixed(2)} | ${plan.entries.length} |`,
    );
  }
  process.stdout.write(
    [
      `Redis CPU a request, limits' worst case (${REQUESTS} requests after ${WARM_UP} unmeasured; an admission and a settlement each):`,
      '',
      '| in flight | Redis CPU µs a request | of which scripts µs | commands a request | meters |',
      '|---:|---:|---:|---:|---:|',
      ...rows,
      '',
    ].join('\n'),
  );
} finally {
  await state.close();
  probe.disconnect();
  server.kill();
}
