import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { redisCpuSeconds } from './bench-redis.js';
import { built } from './request-log-bench-db.js';

/**
 * Redis's own CPU a request costs in the limits' worst case: the token, its project and its team
 * each carry every rate limit and quota (24 meters), and no meter has room taken in advance, so
 * every request's admission charges all 24 meters in Redis and its settlement 21 (tokens,
 * dollars and the slot). Two ways, against a private `redis-server` (pinned to the last core
 * where `taskset` exists, so nothing else shares its CPU count):
 *
 * - `state`: the meters CallerLimits builds (`planMinute`, `settlementMeters`), sent through the
 *   built RedisState, each admission and each settlement a charge of its own;
 * - `limits`: the built CallerLimits itself, over 200 teams (a token and a project each) whose
 *   limits are all too tight for room (`rpm` 100, `max_concurrent` 100, `tpm` and token quotas
 *   60,000 at 500 tokens a request, dollar quotas $1), requests spread over the teams: what the
 *   gateway sends, settlements of requests that end together in one charge.
 *
 * The last column is this process's own CPU a request: the meters' rules (which run in the
 * gateway), the client's work, and the bench's loop around them.
 *
 * `--instructions` runs the `redis-server` under valgrind's callgrind instead and reports the
 * instructions Redis ran a request (counters zeroed after the warm-up, dumped after the run): a
 * figure the host's speed does not move, where Redis's CPU time on a shared VM swings by a fifth
 * from one run to the next and by more than twice from one host to another. Under valgrind Redis
 * runs some 50 times slower, so that mode sends 300 requests a row unless `--requests` says.
 *
 * `npm run bench:redis [-- --requests N --in-flight 1,16,64 --instructions]`.
 */

const { values: options } = parseArgs({
  options: {
    requests: { type: 'string' },
    instructions: { type: 'boolean', default: false },
    'in-flight': { type: 'string', default: '1,16,64' },
    'redis-server': { type: 'string', default: process.env['TEST_REDIS_SERVER'] ?? 'redis-server' },
  },
});
const INSTRUCTIONS = options.instructions === true;
const REQUESTS = Number(options.requests ?? (INSTRUCTIONS ? 300 : 4000));
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
  owner?: string;
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
  settlementMeters(entries: readonly PlannedMeter[], owner: string, reservedTokens: number, usedTokens: number, costUsd: number): Meter[];
}
interface StateModule {
  RedisState: { open(url: string): Promise<BuiltState> };
}
interface Admitted {
  admission: object | null;
  refusal: object | null;
}
interface BuiltLimits {
  admit(holders: readonly object[], estimatedTokens: number): Promise<Admitted>;
  settle(admission: object, usedTokens: number, costUsd: number): void;
  drain(): Promise<void>;
  close(): Promise<void>;
}
interface LimitsModule {
  CallerLimits: new (options: { state: BuiltState; ledger: () => Promise<{ tokens: number; usd: number }>; onError: (error: unknown) => void }) => BuiltLimits;
}

const { planMinute, settlementMeters } = await built<LimitPlanModule>('access/limit-plan.js');
const { RedisState } = await built<StateModule>('state/index.js');
const { CallerLimits } = await built<LimitsModule>('access/caller-limits.js');

const limits = { rpm: 1e9, tpm: 1e12, maxConcurrent: 1e6, tokensPerDay: 1e12, tokensPerMonth: 1e12, tokensTotal: 1e12, usdPerDay: 1e9, usdPerMonth: 1e9 };
const TEAMS = 200;
const tight = { rpm: 100, tpm: 60_000, maxConcurrent: 100, tokensPerDay: 60_000, tokensPerMonth: 60_000, tokensTotal: 60_000, usdPerDay: 1, usdPerMonth: 1 };
const teams = Array.from({ length: TEAMS }, (_, index) => [
  { kind: 'token', key: `token:tok_${index}`, label: `token tok_${index}`, match: { tokenId: `tok_${index}` }, limits: tight },
  { kind: 'project', key: `project:team-${index}/ranker`, label: 'project "ranker"', match: { team: `team-${index}`, project: 'ranker' }, limits: tight },
  { kind: 'team', key: `team:team-${index}`, label: `team "team-${index}"`, match: { team: `team-${index}` }, limits: tight },
]);
const holders = [
  { kind: 'token', key: 'token:tok_bench', label: 'token tok_bench', match: { tokenId: 'tok_bench' }, limits },
  { kind: 'project', key: 'project:bench/ranker', label: 'project "ranker"', match: { team: 'bench', project: 'ranker' }, limits },
  { kind: 'team', key: 'team:bench', label: 'team "bench"', match: { team: 'bench' }, limits },
];

/** The process's name in the state, as CallerLimits gives it. */
const OWNER = `bench-host/${process.pid}/0a1b2c3d.0`;

/** The admission CallerLimits sends when no meter has room: every meter, each with its limit (quotas seeded, as after their first request). */
function admission(planned: readonly PlannedMeter[]): Meter[] {
  return planned.map((entry) => ({
    key: entry.key,
    group: entry.group,
    amount: entry.quantity === 'tokens' ? RESERVED_TOKENS : entry.quantity === 'usd' ? 0 : 1,
    limit: entry.limit,
    ttlMs: entry.ttlMs,
    owner: entry.quantity === 'slots' ? OWNER : undefined,
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

/** Where callgrind writes its dumps, in instructions mode. */
const dumps = INSTRUCTIONS ? mkdtempSync(join(tmpdir(), 'switchyard-redis-callgrind-')) : null;

async function startRedis(port: number): Promise<ChildProcess> {
  const core = Math.max(0, availableParallelism() - 1);
  const redisArguments = ['--port', String(port), '--save', '', '--appendonly', 'no'];
  if (dumps !== null) {
    const counted = spawn(
      'valgrind',
      ['--tool=callgrind', `--callgrind-out-file=${join(dumps, 'callgrind.out.%p')}`, options['redis-server'] ?? 'redis-server', ...redisArguments],
      { stdio: 'ignore' },
    );
    await once(counted, 'spawn');
    return counted;
  }
  const pinned = spawn('taskset', ['-c', String(core), options['redis-server'] ?? 'redis-server', ...redisArguments], { stdio: 'ignore' });
  const failed = await Promise.race([once(pinned, 'error').then(() => true), sleep(300).then(() => false)]);
  if (!failed) return pinned;
  const plain = spawn(options['redis-server'] ?? 'redis-server', redisArguments, { stdio: 'ignore' });
  await sleep(300);
  return plain;
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

/** The instructions callgrind counted since its counters were last zeroed: it dumps them, and the newest dump's `summary:` says. */
function dumpedInstructions(pid: number): number {
  execFileSync('callgrind_control', ['--dump', String(pid)], { stdio: 'ignore' });
  const directory = dumps as string;
  const newest = readdirSync(directory)
    .map((name) => join(directory, name))
    .sort((left, right) => statSync(right).mtimeMs - statSync(left).mtimeMs)[0];
  const summary = newest === undefined ? null : /^summary: (\d+)$/m.exec(readFileSync(newest, 'utf8'));
  if (summary === null) throw new Error(`no callgrind dump with a summary in ${directory}`);
  return Number(summary[1]);
}

const port = await sparePort();
const server = await startRedis(port);
const url = `redis://127.0.0.1:${port}`;
// Under valgrind Redis takes seconds to start: the probe waits until it answers (ioredis
// reconnects and queues the command), and says nothing of the refusals before.
const probe = new Redis(url, { retryStrategy: () => 200 });
const quiet = (): void => {};
probe.on('error', quiet);
await probe.ping();
probe.off('error', quiet);
const state = await RedisState.open(url);

/** Redis CPU µs, script µs and commands a request over `requests` run `inFlight` at a time, after a warm-up. */
async function measure(inFlight: number, one: (index: number) => Promise<void>, warmUp: number, requests: number, settled = async () => {}): Promise<string> {
  let next = 0;
  const run = async (count: number): Promise<void> => {
    next = 0;
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next < count) await one(next++);
      }),
    );
  };
  await run(warmUp);
  await probe.config('RESETSTAT');
  const pid = server.pid as number;
  if (INSTRUCTIONS) execFileSync('callgrind_control', ['--zero', String(pid)], { stdio: 'ignore' });
  const before = await redisCpuSeconds(probe);
  const ownBefore = process.cpuUsage();
  await run(requests);
  await settled();
  const own = process.cpuUsage(ownBefore);
  const cpuUs = ((await redisCpuSeconds(probe)) - before) * 1e6;
  const { calls, scriptUs } = await commandStats(probe);
  const commands = (calls / requests).toFixed(2);
  if (INSTRUCTIONS) return `| ${inFlight} | ${(dumpedInstructions(pid) / requests / 1000).toFixed(1)} | ${commands} |`;
  return `| ${inFlight} | ${(cpuUs / requests).toFixed(1)} | ${(scriptUs / requests).toFixed(1)} | ${commands} | ${((own.user + own.system) / requests).toFixed(1)} |`;
}

try {
  const stateRows: string[] = [];
  const limitsRows: string[] = [];
  for (const inFlight of IN_FLIGHT) {
    const plan = planMinute(holders, Date.now(), SLOT_LEASE_MS);
    stateRows.push(
      await measure(
        inFlight,
        async () => {
          const outcome = await state.charge(admission(plan.entries));
          if (outcome.refused !== -1 || outcome.missing.length > 0) throw new Error(`the worst case must admit every request: ${JSON.stringify(outcome)}`);
          await state.charge(settlementMeters(plan.entries, OWNER, RESERVED_TOKENS, USED_TOKENS, 0.0012));
        },
        WARM_UP,
        REQUESTS,
      ),
    );
    // Fresh keys for each run: the teams' limits must not be reached.
    await probe.flushall();
    const limits = new CallerLimits({ state, ledger: async () => ({ tokens: 0, usd: 0 }), onError: (error) => console.error(error) });
    try {
      limitsRows.push(
        await measure(
          inFlight,
          async (index) => {
            const result = await limits.admit(teams[index % TEAMS] as object[], RESERVED_TOKENS);
            if (result.admission === null) throw new Error('the worst case must admit every request');
            limits.settle(result.admission, USED_TOKENS, 0.0012);
          },
          TEAMS,
          REQUESTS,
          () => limits.drain(),
        ),
      );
    } finally {
      await limits.close();
    }
    await probe.flushall();
  }
  const header = INSTRUCTIONS
    ? ['| in flight | Redis instructions a request (thousands) | commands a request |', '|---:|---:|---:|']
    : ['| in flight | Redis CPU µs a request | of which scripts µs | commands a request | this process µs a request |', '|---:|---:|---:|---:|---:|'];
  process.stdout.write(
    [
      `Redis ${INSTRUCTIONS ? 'instructions' : 'CPU'} a request, limits' worst case: 24 meters, no room (${REQUESTS} requests after a warm-up):`,
      '',
      'Through RedisState, an admission and a settlement each:',
      '',
      ...header,
      ...stateRows,
      '',
      `Through CallerLimits, over ${TEAMS} teams:`,
      '',
      ...header,
      ...limitsRows,
      '',
    ].join('\n'),
  );
} finally {
  await state.close();
  probe.disconnect();
  server.kill();
  if (dumps !== null) {
    await once(server, 'exit');
    rmSync(dumps, { recursive: true, force: true });
  }
}
