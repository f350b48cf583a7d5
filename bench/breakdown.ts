import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureTools, say } from './bench-setup.js';
import { redisCommandsProcessed, type BenchRedis } from './bench-redis.js';
import {
  alignedTable,
  CONNECTIONS,
  type CpuWindow,
  flagValue,
  measureWindow,
  medianOf,
  micro,
  positiveFlag,
  runCommand,
  times,
  WARM_UP,
} from './cpu-window.js';
import { cleanupFeatures, prepareFeatures, REQUEST_TIMEOUT_MS, skippedStateOperations, startFeaturesTarget, type FeaturesSetup } from './features-scenario.js';
import { cleanupLimits, prepareLimits, startLimitsTarget, type LimitsSetup } from './limits-scenario.js';
import { LOAD_CORE } from './load.js';
import { cleanupPool, preparePool, startPoolTarget, type PoolSetup } from './pool-scenario.js';
import { startLadderRung, spawnPinned, startBareProxy, startSwitchyard, type BenchContext, type Target } from './targets.js';
import { warmUp } from './warm-up.js';

/**
 * The feature ladder (issue 32, item 1: each feature's cost per request), on this build: the floor,
 * plain Switchyard, then plain with one feature fewer or one more at a time, up to every feature
 * on, each target measured exactly as the guard measures (bench/cpu-window.ts: the same warm-up,
 * rounds of one wrk window per target taking turns, CPU µs per request of the gateway process
 * plus, for Redis-state targets, of the Redis server). Prints each target's figures (medians of
 * rounds; ÷ floor: the median of the rounds' ratios), then each feature's cost as the difference
 * of two rungs, taken within each round, then its median: within a round the host's drift is
 * shared, as it is for the guard's ratios.
 *
 * Flags: `--rounds N` (5), `--seconds S` (3, per window), `--only name,name` (a subset of the
 * rungs; a cost is printed when both its rungs ran), `--json FILE` (the figures). Redis-state
 * rungs are left out with a note when Redis does not answer. Exit 1 when a target answered with
 * errors, a Redis target went on without Redis for over 1 % of its requests, or something failed.
 */

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// The guard's share: above it a Redis target's figure is of fewer state calls than it makes.
const SKIPPED_STATE_LIMIT = 0.01;

type RungName = 'floor' | 'plain' | 'plain-no-access' | 'plain-no-access-no-infer' | 'limits' | 'limits-redis' | 'pool' | 'pool-redis' | 'features';

interface Rung {
  name: RungName;
  label: string;
  /** Needs the Redis server, whose CPU counts in its figure. */
  redis: boolean;
}

const LADDER: readonly Rung[] = [
  { name: 'floor', label: 'floor (bare undici proxy)', redis: false },
  { name: 'plain', label: 'plain (defaults)', redis: false },
  { name: 'plain-no-access', label: 'plain, no access log', redis: false },
  { name: 'plain-no-access-no-infer', label: 'plain, no access log, no session inference', redis: false },
  { name: 'limits', label: 'limits, memory state', redis: false },
  { name: 'limits-redis', label: 'limits, Redis state', redis: true },
  { name: 'pool', label: 'pool ×4, X-Session-Id, memory state', redis: false },
  { name: 'pool-redis', label: 'pool ×4, X-Session-Id, Redis state', redis: true },
  { name: 'features', label: 'every feature on', redis: true },
];

/** A feature's cost: rung `of` less rung `minus`. */
interface Cost {
  name: string;
  of: RungName;
  minus: RungName;
}

const COSTS: readonly Cost[] = [
  { name: 'access log', of: 'plain', minus: 'plain-no-access' },
  { name: 'session inference', of: 'plain-no-access', minus: 'plain-no-access-no-infer' },
  { name: 'limits admission and settlement (memory)', of: 'limits', minus: 'plain' },
  { name: 'state calls for limits (Redis)', of: 'limits-redis', minus: 'limits' },
  { name: 'pool ×4 and affinity (memory)', of: 'pool', minus: 'plain' },
  { name: 'state calls for routing (Redis)', of: 'pool-redis', minus: 'pool' },
  { name: 'every feature on vs plain', of: 'features', minus: 'plain' },
  { name: 'the rest of plain above the floor', of: 'plain-no-access-no-infer', minus: 'floor' },
];

interface Options {
  rounds: number;
  seconds: number;
  only: ReadonlySet<RungName> | null;
  json: string | null;
}

/** One round's window of each rung measured. */
type Round = Map<RungName, CpuWindow>;

/** CPU µs per request: the gateway's, the Redis server's (0 without Redis state), their sum. */
interface Figures {
  gateway: number;
  redis: number;
  total: number;
}

interface Setups {
  limits: LimitsSetup;
  pool: PoolSetup;
  features: FeaturesSetup;
}

function options(argv: readonly string[]): Options {
  const only = flagValue(argv, '--only');
  let chosen: Set<RungName> | null = null;
  if (only !== undefined) {
    chosen = new Set();
    for (const word of only.split(',').map((part) => part.trim())) {
      const rung = LADDER.find((candidate) => candidate.name === word);
      if (rung === undefined) throw new Error(`--only: no rung ${word} (the rungs: ${LADDER.map((candidate) => candidate.name).join(', ')})`);
      chosen.add(rung.name);
    }
  }
  return {
    rounds: positiveFlag(argv, '--rounds', 5, true),
    seconds: positiveFlag(argv, '--seconds', 3, true),
    only: chosen,
    json: flagValue(argv, '--json') ?? null,
  };
}

const figuresOf = (window: CpuWindow): Figures => ({ gateway: window.cpu, redis: window.stateCpu ?? 0, total: window.cpu + (window.stateCpu ?? 0) });

/** A rung's figures in a round (it ran in every round, or the run failed). */
function figures(round: Round, name: RungName): Figures {
  const window = round.get(name);
  if (window === undefined) throw new Error(`round without ${name}`);
  return figuresOf(window);
}

/** The Redis connection (and key prefix) a Redis rung uses: each scenario its own. */
function redisOf(name: RungName, setups: Setups): BenchRedis | null {
  if (name === 'limits-redis') return setups.limits.redis;
  if (name === 'pool-redis') return setups.pool.redis;
  if (name === 'features') return setups.features.redis;
  return null;
}

async function startRung(name: RungName, context: BenchContext, setups: Setups): Promise<Target> {
  switch (name) {
    case 'floor':
      return startBareProxy(context);
    case 'plain':
      return startSwitchyard(context);
    case 'plain-no-access':
      return startLadderRung(context, name, 'Switchyard, no access log');
    case 'plain-no-access-no-infer':
      return startLadderRung(context, name, 'Switchyard, no access log, no session inference');
    case 'limits':
    case 'limits-redis':
      return startLimitsTarget(context, name, setups.limits);
    case 'pool':
    case 'pool-redis':
      return startPoolTarget(context, name, setups.pool);
    case 'features':
      return startFeaturesTarget(context, setups.features);
  }
}

/** The plain chat config (the `Switchyard` target's) with `logging.access: false` and `topLevel` lines: nothing else differs. */
/** The rung's median figures and ratio to the floor (the median of the rounds' ratios), and its other columns. */
function rungRow(rung: Rung, rounds: readonly Round[], seconds: number, withFloor: boolean): string[] {
  const of = (pick: (round: Round) => number) => medianOf(rounds, pick);
  const commands = rounds.every((round) => (round.get(rung.name)?.stateCommands ?? null) !== null)
    ? of((round) => round.get(rung.name)?.stateCommands ?? Number.NaN).toFixed(1)
    : '';
  return [
    String(LADDER.indexOf(rung) + 1),
    rung.label,
    rounds.map((round) => micro(figures(round, rung.name).total)).join(', '),
    micro(of((round) => figures(round, rung.name).total)),
    micro(of((round) => figures(round, rung.name).gateway)),
    rung.redis ? micro(of((round) => figures(round, rung.name).redis)) : '',
    commands,
    withFloor ? times(of((round) => figures(round, rung.name).total / figures(round, 'floor').total)) : '',
    micro(of((round) => (round.get(rung.name)?.requests ?? 0) / seconds)),
  ];
}

interface CostFigures extends Figures {
  /** The difference's totals, round by round. */
  byRound: number[];
  /** The median of the rounds' differences ÷ the round's floor; null without the floor. */
  vsFloor: number | null;
}

/** A cost's medians of the rounds' differences. */
function costFigures(cost: Cost, rounds: readonly Round[], withFloor: boolean): CostFigures {
  const difference = (round: Round, pick: (figures: Figures) => number) => pick(figures(round, cost.of)) - pick(figures(round, cost.minus));
  return {
    gateway: medianOf(rounds, (round) => difference(round, (figures) => figures.gateway)),
    redis: medianOf(rounds, (round) => difference(round, (figures) => figures.redis)),
    total: medianOf(rounds, (round) => difference(round, (figures) => figures.total)),
    byRound: rounds.map((round) => difference(round, (figures) => figures.total)),
    vsFloor: withFloor ? medianOf(rounds, (round) => difference(round, (figures) => figures.total) / figures(round, 'floor').total) : null,
  };
}

const signed = (value: number) => `${value > 0 ? '+' : ''}${micro(value)}`;
const signedTimes = (value: number) => `${value > 0 ? '+' : ''}${times(value)}`;
const rungNumber = (name: RungName) => LADDER.findIndex((rung) => rung.name === name) + 1;

async function main(): Promise<number> {
  const settings = options(process.argv);
  // Pinned like the bench and the guard: the load generator (we) on one core, every server on the other.
  execFileSync('taskset', ['-cp', LOAD_CORE, String(process.pid)], { stdio: 'ignore' });
  const notes: string[] = [];
  ensureTools(notes, ['wrk']);
  const startedAt = performance.now();
  const wanted = LADDER.filter((rung) => settings.only === null || settings.only.has(rung.name));
  const wants = (name: RungName) => wanted.some((rung) => rung.name === name);
  // Each Redis scenario under a key prefix of this run's own; connected only when one of its rungs runs.
  const setups: Setups = {
    limits: wants('limits-redis') ? await prepareLimits() : { redis: null, notes: [] },
    pool: wants('pool-redis') ? await preparePool(null) : { redis: null, baseline: null, baselineFullConfig: null, skipped: new Set(), notes: [] },
    features: wants('features') ? await prepareFeatures() : { redis: null, notes: [] },
  };
  // Every Redis rung waits for a state operation as long as every feature on does (the default 150 ms
  // let a loaded host's requests go on without Redis: measured, 552 operations in 9,668 requests of
  // pool ×4 in one run), so that the state calls' costs are of the same calls as rung 9's.
  setups.limits.stateRequestTimeoutMs = REQUEST_TIMEOUT_MS;
  setups.pool.stateRequestTimeoutMs = REQUEST_TIMEOUT_MS;
  if (wanted.some((rung) => rung.redis))
    notes.push(`Redis targets: \`state.request_timeout_ms: ${REQUEST_TIMEOUT_MS}\` (every feature on's), not the default 150 ms`);
  const ladder = wanted.filter((rung) => !rung.redis || redisOf(rung.name, setups) !== null);
  for (const rung of wanted.filter((candidate) => !ladder.includes(candidate))) notes.push(`${rung.label}: left out, Redis did not answer`);
  notes.push(...setups.limits.notes, ...setups.pool.notes, ...setups.features.notes);
  const workDirectory = mkdtempSync(join(tmpdir(), 'switchyard-bench-breakdown-'));
  const targets = new Map<RungName, Target>();
  let upstreamStop: (() => void) | null = null;
  // Processes being started: a signal during a start waits for it, so that what it started is stopped too.
  const starting: Promise<unknown>[] = [];
  let cleaned: Promise<void> | null = null;
  // Once only, whichever comes first: the end of the run, a failure, or a signal.
  const cleanup = (): Promise<void> =>
    (cleaned ??= (async () => {
      await Promise.allSettled(starting);
      await Promise.all([...targets.values()].map((target) => target.stop()));
      // After the gateways are gone, so that none writes its counts back.
      if (setups.limits.redis !== null) say(await cleanupLimits(setups.limits));
      if (setups.pool.redis !== null) say(await cleanupPool(setups.pool));
      if (setups.features.redis !== null) say(await cleanupFeatures(setups.features));
      upstreamStop?.();
      rmSync(workDirectory, { recursive: true, force: true });
    })());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      say(`${signal}: stopping what the breakdown started`);
      void cleanup().finally(() => process.exit(1));
    });
  }
  try {
    if (ladder.length === 0) throw new Error('no rung to measure');
    const upstreamStart = spawnPinned('node', [join(root, 'dist-bench', 'fast-upstream.js'), '0']).then((upstream) => {
      upstreamStop = () => upstream.child.kill('SIGTERM');
      return upstream;
    });
    starting.push(upstreamStart);
    const upstream = await upstreamStart;
    const context: BenchContext = {
      root,
      workDirectory,
      upstreamOrigin: `http://127.0.0.1:${String(upstream.first['port'])}`,
      upstreamPid: upstream.child.pid as number,
    };
    const starts = ladder.map((rung) =>
      startRung(rung.name, context, setups).then((target) => {
        targets.set(rung.name, target);
        return target;
      }),
    );
    starting.push(...starts);
    const started = await Promise.allSettled(starts);
    const failed = started.find((result) => result.status === 'rejected');
    if (failed?.status === 'rejected') throw failed.reason;
    // Every Redis rung counts its commands and the state operations it went on without, as the guard's every feature on does.
    for (const rung of ladder) {
      const redis = redisOf(rung.name, setups);
      const target = targets.get(rung.name) as Target;
      if (redis === null) continue;
      target.stateCommands ??= () => redisCommandsProcessed(redis.client);
      target.stateSkipped ??= () => skippedStateOperations(target.origin);
    }
    for (const rung of ladder) {
      const target = targets.get(rung.name) as Target;
      say(`warming ${target.label} up`);
      await warmUp(target, workDirectory, WARM_UP, notes);
    }
    const rounds: Round[] = [];
    for (let round = 1; round <= settings.rounds; round++) {
      say(`round ${round}/${settings.rounds}`);
      const windows: Round = new Map();
      for (const rung of ladder) windows.set(rung.name, await measureWindow(targets.get(rung.name) as Target, settings.seconds, workDirectory));
      rounds.push(windows);
    }
    const withFloor = targets.has('floor');
    const header = ['#', 'target', 'total µs by round', 'median µs', 'gateway µs', 'Redis µs', 'Redis commands / req', '÷ floor', 'req/s'];
    process.stdout.write(
      `CPU per request by target (µs: the gateway's, plus the Redis server's for Redis state; medians of ${settings.rounds} rounds of ${settings.seconds} s, ${CONNECTIONS} connections; ÷ floor: the median of the rounds' ratios; Redis commands: INFO's count, from every client of that Redis)\n${alignedTable(
        [header, ...ladder.map((rung) => rungRow(rung, rounds, settings.seconds, withFloor))],
        2,
      )}\n\n`,
    );
    const costs = COSTS.filter((cost) => targets.has(cost.of) && targets.has(cost.minus)).map((cost) => ({ ...cost, ...costFigures(cost, rounds, withFloor) }));
    process.stdout.write(
      `Each feature's cost per request (µs: a rung less another, the difference taken within each round, then its median; ÷ floor: the median of the rounds' differences ÷ their floor)\n${alignedTable(
        [
          ['feature', 'rungs', 'total µs by round', 'gateway µs', 'Redis µs', 'total µs', '÷ floor'],
          ...costs.map((cost) => [
            cost.name,
            `${rungNumber(cost.of)} − ${rungNumber(cost.minus)}`,
            cost.byRound.map(signed).join(', '),
            signed(cost.gateway),
            signed(cost.redis),
            signed(cost.total),
            cost.vsFloor === null ? '' : signedTimes(cost.vsFloor),
          ]),
        ],
        2,
      )}\n`,
    );
    const problems: string[] = [];
    for (const rung of ladder) {
      const failures = rounds.reduce((sum, round) => sum + (round.get(rung.name)?.failures ?? 0), 0);
      if (failures > 0) problems.push(`${failures} failed responses from ${rung.label}`);
      const skipped = rounds.reduce((sum, round) => sum + (round.get(rung.name)?.stateSkipped ?? 0), 0);
      const requests = rounds.reduce((sum, round) => sum + (round.get(rung.name)?.requests ?? 0), 0);
      if (skipped > 0) {
        const words = `${rung.label} went on without Redis for ${skipped} state operations in ${requests} requests (timeouts or its breaker)`;
        if (skipped > SKIPPED_STATE_LIMIT * requests) problems.push(`${words}, so it measured fewer state calls than it makes`);
        else notes.push(words);
      }
    }
    for (const note of [...notes, ...problems]) process.stdout.write(`- ${note}\n`);
    const median = (name: RungName) => medianOf(rounds, (round) => figures(round, name).total);
    const headline = [
      ...(withFloor ? [`floor ${micro(median('floor'))} µs`] : []),
      ...(targets.has('plain') ? [`plain ${micro(median('plain'))} µs`] : []),
      ...(targets.has('features') ? [`every feature ${micro(median('features'))} µs`] : []),
    ];
    const summary = `bench-breakdown: ${ladder.length} targets, ${settings.rounds} rounds of ${settings.seconds} s${headline.length === 0 ? '' : `; ${headline.join(', ')} a request`}; ${problems.length === 0 ? 'no failures' : `FAILED: ${problems.join(', ')}`}`;
    process.stdout.write(`${summary}\n`);
    if (settings.json !== null) {
      const figuresJson = {
        date: new Date().toISOString(),
        rounds: settings.rounds,
        secondsPerWindow: settings.seconds,
        connections: CONNECTIONS,
        targets: ladder.map((rung) => ({
          number: rungNumber(rung.name),
          name: rung.name,
          label: rung.label,
          byRound: rounds.map((round) => round.get(rung.name)),
          medians: {
            gateway: medianOf(rounds, (round) => figures(round, rung.name).gateway),
            redis: rung.redis ? medianOf(rounds, (round) => figures(round, rung.name).redis) : null,
            total: median(rung.name),
            vsFloor: withFloor ? medianOf(rounds, (round) => figures(round, rung.name).total / figures(round, 'floor').total) : null,
          },
        })),
        costs,
        notes,
        problems,
        passed: problems.length === 0,
        summary,
        runSeconds: Math.round((performance.now() - startedAt) / 1_000),
      };
      writeFileSync(settings.json, `${JSON.stringify(figuresJson, null, 2)}\n`);
    }
    return problems.length === 0 ? 0 : 1;
  } finally {
    await cleanup();
  }
}

runCommand('bench-breakdown', main);
