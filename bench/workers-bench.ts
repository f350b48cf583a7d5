import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectBenchRedis, removeBenchKeys } from './bench-redis.js';
import { connectionsInTurn, median, openLoop } from './load.js';
import { childrenOf, cpuSeconds, ownCpuSeconds } from './process-stats.js';
import { launchSwitchyard, spawnPinned, startBareProxy, workersConfig, type BenchContext, type Target } from './targets.js';

/**
 * `serve --workers` against one process (issue 34): the gateway's CPU per request, its primary and
 * workers together, at open-loop rates that saturate nothing. Every process may use both cores (a
 * 2-core machine cannot keep the load generator off two workers' cores), so the figure compared is
 * CPU per request, not throughput. All use Redis state (more than one worker needs it). Each round
 * runs, in turn, at the rate: the bare undici proxy (the floor) in one process and in two
 * (node:cluster, as the workers), then the gateway with one process and with `--workers 2`. The
 * load goes over 8 connections in turn (`connectionsInTurn`), so that each worker gets its share.
 *
 * Two processes at one total rate are each half as busy, and on a VM a process that sleeps between
 * requests pays for every wake-up (docs/workers.md), so the gateway's 2 ÷ 1 is shown beside the
 * floor's. `--twice` adds the gateway's two layouts at twice the rate, where each of two workers is
 * as busy as the one process was at the rate.
 *
 *   node dist-bench/workers-bench.js [--rate 600] [--seconds 15] [--warm-up 10] [--rounds 5] [--database postgres://…] [--keep-cores-awake]
 *
 * `--keep-cores-awake` runs a busy loop at the idle scheduling class (`chrt --idle`) on each core,
 * which any other process preempts at once: the vCPUs never halt, so waking a process costs no
 * exit to the hypervisor, and the rounds spread less (docs/workers.md).
 *
 * The warm-up is long because each worker compiles the hot path itself: a few seconds of V8's
 * optimising compilers land in a short window (with 2 s, the floor read 217 µs; with 20 s, 140 µs).
 * The request log goes to SQLite (one file the workers share) unless `--database` names another.
 */
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const EVERY_CORE = ['taskset', '-c', '0,1', 'node'];

function text(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index === -1 ? undefined : process.argv[index + 1];
}

function argument(name: string, fallback: number): number {
  const index = process.argv.indexOf(name);
  return index === -1 ? fallback : Number(process.argv[index + 1]);
}

/** A busy loop per core at the idle scheduling class, so that no vCPU halts while the bench runs. */
function keepCoresAwake(): ChildProcess[] {
  return Array.from({ length: availableParallelism() }, (_, core) =>
    spawn('chrt', ['--idle', '0', 'taskset', '-c', String(core), 'sh', '-c', 'while :; do :; done'], { stdio: 'ignore' }),
  );
}

/** Keep-alive connections the load is spread over, each request on the next in turn. */
const CONNECTIONS = 8;

interface Measured {
  cpuMicroseconds: number;
  failed: number;
  /** CPU per request of each process: the primary first, then its workers (one figure for a single process). */
  perProcess: number[];
}

async function measure(target: Target, rate: number, seconds: number, warmUp: number): Promise<Measured> {
  const connections = await connectionsInTurn(target, CONNECTIONS);
  try {
    await openLoop(target, rate, warmUp, connections);
    const processes = [target.pid, ...childrenOf(target.pid)];
    const before = processes.map(ownCpuSeconds);
    const total = cpuSeconds(target.pid);
    const result = await openLoop(target, rate, seconds, connections);
    const completed = Math.max(1, result.completed);
    const perRequest = (seconds: number): number => (seconds * 1e6) / completed;
    return {
      cpuMicroseconds: perRequest(cpuSeconds(target.pid) - total),
      failed: result.failed,
      perProcess: processes.map((pid, index) => perRequest(ownCpuSeconds(pid) - (before[index] as number))),
    };
  } finally {
    await connections.close();
  }
}

interface Setup {
  name: string;
  workers: number;
  rateFactor: number;
  /** The bare undici proxy, in as many processes, rather than the gateway. */
  floor?: true;
}

const SETUPS: readonly Setup[] = [
  { name: 'floor', workers: 1, rateFactor: 1, floor: true },
  { name: 'floor, 2 processes', workers: 2, rateFactor: 1, floor: true },
  { name: '1 worker', workers: 1, rateFactor: 1 },
  { name: '2 workers', workers: 2, rateFactor: 1 },
];

/** With `--twice`: the same at twice the rate, where each of two workers is as busy as one process was. */
const TWICE: readonly Setup[] = [
  { name: 'floor, 2 processes, twice the rate', workers: 2, rateFactor: 2, floor: true },
  { name: '1 worker, twice the rate', workers: 1, rateFactor: 2 },
  { name: '2 workers, twice the rate', workers: 2, rateFactor: 2 },
];

async function main(): Promise<void> {
  const rate = argument('--rate', 600);
  const seconds = argument('--seconds', 15);
  const rounds = argument('--rounds', 5);
  const warmUp = argument('--warm-up', 10);
  const database = text('--database');
  const setups = process.argv.includes('--twice') ? [...SETUPS, ...TWICE] : SETUPS;
  const { redis, skipped } = await connectBenchRedis('switchyard-bench-workers');
  if (redis === null) throw new Error(`the workers bench needs Redis: ${skipped}`);
  const workDirectory = mkdtempSync(join(tmpdir(), 'switchyard-bench-workers-'));
  const spinners = process.argv.includes('--keep-cores-awake') ? keepCoresAwake() : [];
  const upstream = await spawnPinned('node', [join(ROOT, 'dist-bench', 'fast-upstream.js'), '0'], { core: '0,1' });
  const context: BenchContext = {
    root: ROOT,
    workDirectory,
    upstreamOrigin: `http://127.0.0.1:${String(upstream.first['port'])}`,
    upstreamPid: upstream.child.pid as number,
  };
  const figures = new Map<string, number[]>(setups.map((setup) => [setup.name, []]));
  let failures = 0;
  const start = async (setup: Setup, round: number): Promise<Target> => {
    if (setup.floor) return startBareProxy(context, EVERY_CORE, setup.workers);
    const config = workersConfig(context, join(workDirectory, 'switchyard'), {
      redisUrl: redis.url,
      keyPrefix: `${redis.keyPrefix}${round}-${setup.workers}-${setup.rateFactor}:`,
      workers: setup.workers,
      database,
    });
    return launchSwitchyard(context, { root: ROOT, name: 'switchyard', label: setup.name }, config, [], undefined, EVERY_CORE);
  };
  try {
    for (let round = 0; round < rounds; round++) {
      for (const setup of setups) {
        const target = await start(setup, round);
        try {
          const { cpuMicroseconds, failed, perProcess } = await measure(target, rate * setup.rateFactor, seconds, warmUp);
          figures.get(setup.name)?.push(cpuMicroseconds);
          failures += failed;
          if (perProcess.length > 1)
            process.stderr.write(`  ${setup.name}: primary, workers ${perProcess.map((value) => value.toFixed(0)).join(', ')} µs a request\n`);
        } finally {
          await target.stop();
        }
        rmSync(join(workDirectory, 'switchyard'), { recursive: true, force: true });
      }
      process.stderr.write(`round ${round + 1}: ${[...figures].map(([name, values]) => `${name} ${Math.round(values.at(-1) ?? 0)} µs`).join(', ')}\n`);
    }
  } finally {
    upstream.child.kill('SIGTERM');
    for (const spinner of spinners) spinner.kill('SIGKILL');
    await removeBenchKeys(redis, 'workers');
    redis.client.disconnect();
    rmSync(workDirectory, { recursive: true, force: true });
  }
  const middle = (name: string): number => median(figures.get(name) ?? []);
  const roundRatios = (over: string, under: string): number[] =>
    (figures.get(over) ?? []).map((value, index) => value / (figures.get(under)?.[index] ?? value));
  const described = (values: number[]): string => `${median(values).toFixed(2)} (rounds: ${values.map((value) => value.toFixed(2)).join(', ')})`;
  const gateway = roundRatios('2 workers', '1 worker');
  const floor = roundRatios('floor, 2 processes', 'floor');
  process.stdout.write(
    [
      `| ${rate} requests a second, ${rounds} rounds of ${seconds} s after ${warmUp} s, medians${spinners.length > 0 ? ', cores kept awake' : ''} | CPU µs / request | ÷ floor of as many processes |`,
      '|---|---:|---:|',
      ...setups.map((setup) => {
        const floor = setups.find((other) => other.floor && other.workers === setup.workers && other.rateFactor === setup.rateFactor);
        return `| ${setup.name} | ${middle(setup.name).toFixed(0)} | ${setup.floor || floor === undefined ? '' : `${(middle(setup.name) / middle(floor.name)).toFixed(2)}×`} |`;
      }),
      '',
      `2 processes ÷ 1, one total rate: the gateway ${described(gateway)}; the floor ${described(floor)}`,
      `the gateway's rise beyond the floor's (its 2 ÷ 1 over the floor's, each round): ${described(gateway.map((value, index) => value / (floor[index] ?? value)))}`,
      ...(setups === SETUPS
        ? []
        : [
            `twice the rate, 2 workers ÷ 1 worker: ${described(roundRatios('2 workers, twice the rate', '1 worker, twice the rate'))}`,
            `each process as busy as one (2 at twice the rate ÷ 1 at the rate): the gateway ${described(roundRatios('2 workers, twice the rate', '1 worker'))}; the floor ${described(roundRatios('floor, 2 processes, twice the rate', 'floor'))}`,
          ]),
      `failed requests: ${failures}`,
      '',
    ].join('\n'),
  );
}

await main();
