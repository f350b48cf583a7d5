import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectBenchRedis, removeBenchKeys, type BenchRedis } from './bench-redis.js';
import { baselineBuild, ensureTools, say } from './bench-setup.js';
import { alignedTable, flagValue, positiveFlag, runCommand, times } from './cpu-window.js';
import { chatBody, LOAD_CORE } from './load.js';
import { childrenOf } from './process-stats.js';
import {
  CHAT_PATH,
  launchSwitchyard,
  plainChatConfig,
  spawnPinned,
  startBareProxy,
  startLadderRung,
  type BenchContext,
  type Target,
  type TargetName,
  workersConfig,
} from './targets.js';

/**
 * Instructions a request costs, counted by valgrind's callgrind (issue 32, item 1): a figure the
 * host's speed does not move (CPU time on a shared machine swings by 20–40 % between two windows of
 * one build). A whole process's count still moves with what lands in the counted window, so two
 * lumps are taken apart: V8's optimising compilers, and full collections of the old generation.
 * What is left (the floor's 226k and 228k in two runs; plain chat's 591k, 650k and 736k in three)
 * tells a change of a tenth, not of a few per cent.
 *
 * Each target runs under callgrind, V8 on one thread (`--single-threaded`, so that what its
 * compilers and collector do is counted the same way whatever the scheduling), and is sent
 * `--warm-up` requests, then its counters are zeroed, `--requests` more are sent
 * (8 at a time, keep-alive), and the counters dumped: instructions ÷ requests. The targets are the
 * floor (the bare undici proxy), plain chat as users run it, and plain chat without the access log
 * and then without session inference too (the feature ladder's rungs 1–4; `--only` picks among
 * them); `--baseline DIR` adds plain chat of another built checkout. `--idle SECONDS` then counts
 * each target with no request for that long: what its processes do on their own each second
 * (timers, the event-loop monitor), shown beside the requests' own. Under valgrind a process runs
 * some 50 times slower: a target takes three to four minutes.
 *
 * Instructions are not time: a cache miss, a system call's kernel side or a lock are not in them.
 * And under valgrind a target serves some 20 requests a second, not thousands, so what the gateway
 * does once per interval (the request log's and the access log's batches, the token-change check,
 * a session binding's read once a second) is shared by fewer requests and counts for more. Read
 * the counts for what a change of code costs, and the CPU ladder (bench/breakdown.ts) for the whole.
 */

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const CONCURRENCY = 8;

type Rung = 'floor' | 'plain' | 'plain-no-access' | 'plain-no-access-no-infer' | 'baseline' | 'plain-redis' | 'plain-2-workers';

const LABELS: Record<Rung, string> = {
  floor: 'floor (bare undici proxy)',
  plain: 'plain (defaults)',
  'plain-no-access': 'plain, no access log',
  'plain-no-access-no-infer': 'plain, no access log, no session inference',
  baseline: 'plain, baseline build',
  'plain-redis': 'plain, Redis state, one process',
  'plain-2-workers': 'plain, Redis state, 2 workers (primary + workers)',
};

/**
 * Asked for by name only (`--only plain-redis,plain-2-workers`): what a request costs one process
 * and two workers of `serve --workers 2` (issue 34), both on Redis state as workers need. Both are
 * kept busy (requests 8 at a time), so each process's own timers are shared by as many requests a
 * second, whatever the machine's speed: the difference is what a second worker adds to a request.
 */
const WORKER_RUNGS: readonly Rung[] = ['plain-redis', 'plain-2-workers'];

interface Options {
  requests: number;
  warmUp: number;
  /** Seconds with no request counted after the requests (`--idle`): what the processes do on their own. */
  idleSeconds: number;
  /** `--database URL`: the request log of the Redis-state targets elsewhere than their SQLite file. */
  database: string | undefined;
  rungs: readonly Rung[];
}

function options(argv: readonly string[]): Options {
  const only = flagValue(argv, '--only');
  const all: Rung[] = ['floor', 'plain', 'plain-no-access', 'plain-no-access-no-infer'];
  const rungs = only === undefined ? all : only.split(',').map((word) => word.trim());
  for (const rung of rungs)
    if (!all.includes(rung as Rung) && !WORKER_RUNGS.includes(rung as Rung))
      throw new Error(`--only: no target ${rung} (the targets: ${[...all, ...WORKER_RUNGS].join(', ')})`);
  return {
    requests: positiveFlag(argv, '--requests', 1_000, true),
    warmUp: positiveFlag(argv, '--warm-up', 3_000, true),
    idleSeconds: argv.includes('--idle') ? positiveFlag(argv, '--idle', 20, true) : 0,
    database: flagValue(argv, '--database'),
    rungs: rungs as Rung[],
  };
}

/** Sends `count` chat requests, `CONCURRENCY` at a time over kept-alive connections; resolves with the failures. */
function send(target: Target, count: number): Promise<number> {
  const url = new URL(`${target.origin}${CHAT_PATH}`);
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const body = chatBody(false);
  const headers = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...target.headers };
  let sent = 0;
  let answered = 0;
  let failures = 0;
  return new Promise((resolve, reject) => {
    const next = (): void => {
      if (sent === count) return;
      sent++;
      const outgoing = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent, headers }, (response) => {
        if (response.statusCode !== 200) failures++;
        response.resume();
        response.on('end', () => {
          answered++;
          if (answered < count) return next();
          agent.destroy();
          resolve(failures);
        });
      });
      outgoing.on('error', reject);
      outgoing.end(body);
    };
    for (let started = 0; started < CONCURRENCY; started++) next();
  });
}

/** What a target's counted requests executed: every instruction, and two lumps of it that are not the requests' own. */
interface Counted {
  total: number;
  /** Requests a second the counted window served. */
  rate: number;
  /** Instructions a second all the target's processes executed with no request at all (`--idle`), 0 unless asked. */
  idlePerSecond: number;
  /** V8's optimising compilers (Maglev, TurboFan; with `--single-threaded` on the main thread). */
  compiling: number;
  /** Full (mark-compact) collections of the old generation. */
  fullCollections: number;
}

/** Inclusive instructions of the first function of callgrind_annotate's listing that matches `name`; 0 when none ran. */
function inclusiveOf(listing: string, name: RegExp): number {
  for (const line of listing.split('\n')) {
    const match = /^\s*([\d,]+) /.exec(line);
    if (match !== null && name.test(line)) return Number((match[1] as string).replaceAll(',', ''));
  }
  return 0;
}

/**
 * The instructions callgrind's dump `file` counted (its `summary:` line), with two parts taken
 * apart. V8's optimising compilers: after thousands of requests under valgrind a gateway's JIT is
 * still at work (a fifth of the count after 1,500 requests), which at full speed is over within
 * seconds. Full collections: one lands in a window of 1,000 requests or does not, and costs a
 * large heap's size when it does (with them, two runs of one build differed by half).
 */
function counted(file: string): Omit<Counted, 'rate' | 'idlePerSecond'> {
  const match = /^summary: (\d+)$/m.exec(readFileSync(file, 'utf8'));
  if (match === null) throw new Error(`${file}: no summary line`);
  const listing = execFileSync('callgrind_annotate', ['--inclusive=yes', file], { encoding: 'utf8', maxBuffer: 64 << 20 });
  return {
    total: Number(match[1]),
    compiling: inclusiveOf(listing, /v8::internal::Compiler::CompileOptimized\(/),
    fullCollections: inclusiveOf(listing, /v8::internal::MarkCompactCollector::CollectGarbage\(/),
  };
}

async function start(
  rung: Rung,
  context: BenchContext,
  wrapper: readonly string[],
  baselineRoot: string | null,
  redis: BenchRedis | null,
  database: string | undefined,
): Promise<Target> {
  const plain = (name: TargetName, label: string, buildRoot: string) =>
    launchSwitchyard(context, { root: buildRoot, name, label }, plainChatConfig(context, join(context.workDirectory, name)), [], undefined, wrapper);
  const onRedis = (workers: number) => {
    if (redis === null) throw new Error(`${LABELS[rung]} needs Redis (TEST_REDIS_URL, or one on 127.0.0.1:6379)`);
    const config = workersConfig(context, join(context.workDirectory, 'switchyard'), {
      redisUrl: redis.url,
      keyPrefix: `${redis.keyPrefix}${rung}:`,
      workers,
      database,
    });
    return launchSwitchyard(context, { root, name: 'switchyard', label: LABELS[rung] }, config, [], undefined, wrapper);
  };
  switch (rung) {
    case 'floor':
      return startBareProxy(context, wrapper);
    case 'plain':
      return plain('switchyard', LABELS.plain, root);
    case 'plain-no-access':
    case 'plain-no-access-no-infer':
      return startLadderRung(context, rung, LABELS[rung], wrapper);
    case 'baseline':
      return plain('baseline', LABELS.baseline, baselineRoot as string);
    case 'plain-redis':
      return onRedis(1);
    case 'plain-2-workers':
      return onRedis(2);
  }
}

/** One target under callgrind: its instructions per request, measured after the warm-up. */
async function measure(rung: Rung, context: BenchContext, settings: Options, baselineRoot: string | null, redis: BenchRedis | null): Promise<Counted> {
  const prefix = join(context.workDirectory, `callgrind-${rung}`);
  // V8 on one thread: its compilers and collector otherwise run beside the main thread, and what
  // they get done in a valgrind-serialised process depends on the scheduling (measured: 840k and
  // 1,054k instructions a request for the same build). Children are followed so that the workers
  // `serve --workers` forks (with the primary's node flags) are counted too, each in its own file.
  const wrapper = [
    'valgrind',
    '--tool=callgrind',
    '--trace-children=yes',
    `--callgrind-out-file=${prefix}.%p`,
    '--dump-instr=no',
    '--dump-line=no',
    'node',
    '--single-threaded',
  ];
  say(`${LABELS[rung]}: starting under callgrind`);
  const target = await start(rung, context, wrapper, baselineRoot, redis, settings.database);
  try {
    say(`${LABELS[rung]}: ${settings.warmUp} requests to warm up, then ${settings.requests} counted`);
    if ((await send(target, settings.warmUp)) > 0) throw new Error(`${LABELS[rung]}: requests failed during the warm-up`);
    const processes = [target.pid, ...childrenOf(target.pid)];
    const callgrind = (command: '--zero' | '--dump') => {
      for (const pid of processes) execFileSync('callgrind_control', [command, String(pid)], { stdio: 'ignore' });
    };
    callgrind('--zero');
    const began = performance.now();
    const failures = await send(target, settings.requests);
    const seconds = (performance.now() - began) / 1000;
    callgrind('--dump');
    if (failures > 0) throw new Error(`${LABELS[rung]}: ${failures} of ${settings.requests} requests failed`);
    // The first dump of each process is `<prefix>.<pid>.1`: the counted requests alone; the second,
    // with `--idle`, the seconds with no request.
    const dumps = (number: number) =>
      processes.map((pid) => {
        const dump = `${prefix}.${pid}.${number}`;
        if (!existsSync(dump)) throw new Error(`${LABELS[rung]}: callgrind wrote no dump for process ${pid}`);
        return counted(dump);
      });
    const busy = dumps(1);
    let idlePerSecond = 0;
    if (settings.idleSeconds > 0) {
      callgrind('--zero');
      await new Promise((resolve) => setTimeout(resolve, settings.idleSeconds * 1000));
      callgrind('--dump');
      idlePerSecond = dumps(2).reduce((sum, part) => sum + part.total, 0) / settings.idleSeconds;
    }
    const perRequest = (key: 'total' | 'compiling' | 'fullCollections') => busy.reduce((sum, part) => sum + part[key], 0) / settings.requests;
    return {
      total: perRequest('total'),
      compiling: perRequest('compiling'),
      fullCollections: perRequest('fullCollections'),
      rate: settings.requests / seconds,
      idlePerSecond,
    };
  } finally {
    await target.stop();
  }
}

async function main(): Promise<number> {
  const settings = options(process.argv);
  execFileSync('taskset', ['-cp', LOAD_CORE, String(process.pid)], { stdio: 'ignore' });
  const notes: string[] = [];
  ensureTools(notes, ['valgrind']);
  const baseline = baselineBuild(process.argv);
  const rungs: Rung[] = [...settings.rungs, ...(baseline === null ? [] : (['baseline'] as const))];
  const workDirectory = mkdtempSync(join(tmpdir(), 'switchyard-bench-instructions-'));
  const upstream = await spawnPinned('node', [join(root, 'dist-bench', 'fast-upstream.js'), '0']);
  const redis = rungs.some((rung) => WORKER_RUNGS.includes(rung)) ? (await connectBenchRedis('switchyard-bench-instructions')).redis : null;
  try {
    const context: BenchContext = {
      root,
      workDirectory,
      upstreamOrigin: `http://127.0.0.1:${String(upstream.first['port'])}`,
      upstreamPid: upstream.child.pid as number,
    };
    const figures = new Map<Rung, Counted>();
    for (const rung of rungs) figures.set(rung, await measure(rung, context, settings, baseline?.root ?? null, redis));
    const thousands = (value: number) => `${Math.round(value / 1000)}k`;
    const floor = figures.get('floor');
    const idle = settings.idleSeconds > 0;
    const rows = rungs.map((rung) => {
      const { total, compiling, fullCollections, rate, idlePerSecond } = figures.get(rung) as Counted;
      const own = total - compiling - fullCollections;
      return [
        LABELS[rung] + (rung === 'baseline' && baseline !== null ? ` (${baseline.label})` : ''),
        thousands(total),
        thousands(compiling),
        thousands(fullCollections),
        thousands(own),
        floor === undefined ? '' : times(own / (floor.total - floor.compiling - floor.fullCollections)),
        rate.toFixed(1),
        ...(idle ? [thousands(idlePerSecond), thousands(own - idlePerSecond / rate)] : []),
      ];
    });
    const heading = ['target', 'instructions / req', 'compiling', 'full collections', 'the rest', 'the rest ÷ floor', 'requests / s'];
    process.stdout.write(
      `Instructions per request (callgrind, node --single-threaded; ${settings.requests} requests counted after ${settings.warmUp}, ${CONCURRENCY} at a time${
        idle ? `; then ${settings.idleSeconds} s with no request` : ''
      })\n${alignedTable([[...heading, ...(idle ? ['idle instructions / s', 'the rest less idle'] : [])], ...rows], 1)}\n${notes
        .map((note) => `- ${note}\n`)
        .join('')}`,
    );
    return 0;
  } finally {
    upstream.child.kill('SIGTERM');
    if (redis !== null) {
      await removeBenchKeys(redis, 'instructions');
      redis.client.disconnect();
    }
    rmSync(workDirectory, { recursive: true, force: true });
  }
}

runCommand('bench-instructions', main);
