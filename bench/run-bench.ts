import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { baselineBuild, ensurePortkey, ensureTools, say } from './bench-setup.js';
import { concurrentStreams, median, openLoop, openLoopPool, pooledOpenLoop, streamProbe, wrk, LOAD_CORE, type OpenLoopResult } from './load.js';
import { pairedRounds, type Samples } from './paired-rounds.js';
import { cpuSeconds, rssBytes } from './process-stats.js';
import { limitsSection, renderLimitsSection } from './limits-report.js';
import { featuresSection, renderFeaturesSection } from './features-report.js';
import { cleanupFeatures, describeFeatures, prepareFeatures, startFeaturesTarget, type FeaturesSetup } from './features-scenario.js';
import { cleanupLimits, describeLimits, limitsTargetNames, prepareLimits, startLimitsTarget, startLimitsTargets, type LimitsSetup } from './limits-scenario.js';
import { poolSection, renderPoolSection } from './pool-report.js';
import { cleanupPool, describePool, poolTargetNames, preparePool, startPoolTarget, startPoolTargets, type PoolSetup } from './pool-scenario.js';
import { renderReport, type Report, type RoundCpu, type TargetFigures } from './report.js';
import { renderMessagesSection, runMessagesScenario } from './messages-scenario.js';
import { renderNativeSection, runNativeScenario } from './native-scenario.js';
import { describeNoise, measureMachineNoise } from './machine-noise.js';
import { warmUp } from './warm-up.js';
import {
  direct,
  spawnPinned,
  startBareProxy,
  startNginx,
  startPortkey,
  startSwitchyard,
  type BenchContext,
  type SwitchyardBuild,
  type Target,
  type TargetName,
} from './targets.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
/** Every target that is a proxy in front of the fake upstream, in the notes' order. */
const PROXIES = ['bare', 'switchyard', 'baseline', 'pool', 'pool-redis', 'pool-no-infer', 'baseline-pool', 'limits', 'limits-redis', 'features'] as const;
const quick = process.argv.includes('--quick');
// Portkey takes a third of a quick run's time for a figure that does not change from day to day:
// the full run compares with it unless told not to, the quick run only when asked.
const withPortkey = quick ? process.argv.includes('--portkey') : !process.argv.includes('--no-portkey');
const baseline = baselineBuild(process.argv);
// The native passthrough scenario (bench/native-scenario.ts): `--no-native` leaves it out,
// `--native-only` runs it alone (with the fake upstream), for a quick look at that path.
const nativeOnly = process.argv.includes('--native-only');
// The Messages scenario (bench/messages-scenario.ts): `--no-messages` leaves it out, `--messages-only`
// runs it alone.
const messagesOnly = process.argv.includes('--messages-only');
// The pool scenario (bench/pool-scenario.ts) adds three or four Switchyard targets to every round;
// `--no-pool` leaves them out when only the plain chat path is being looked at. Neither it nor the
// limits scenario runs with `--native-only` (their Redis connection would keep the bench alive).
const withPool = !nativeOnly && !process.argv.includes('--no-pool');
// The limits scenario (bench/limits-scenario.ts) adds one or two: `--no-limits` leaves them out.
const withLimits = !nativeOnly && !process.argv.includes('--no-limits');
// The every-feature scenario (bench/features-scenario.ts, issue 32) adds one, with Redis state (left
// out with a remark when Redis does not answer): `--no-features` leaves it out.
const withFeatures = !nativeOnly && !process.argv.includes('--no-features');
const withNative = nativeOnly || !process.argv.includes('--no-native');
const nativePlan = quick ? { rounds: 3, probes: 100, streams: 500 } : { rounds: 7, probes: 200, streams: 1_000 };
const withMessages = messagesOnly || !process.argv.includes('--no-messages');
const messagesPlan = quick ? { rounds: 3, probes: 300 } : { rounds: 9, probes: 1_000 };

// The host's speed drifts from second to second (2-vCPU VMs: the same build measured 0.76–0.95×
// and 1.15–1.6× the floor's throughput ten minutes apart, and back-to-back 3-s windows differed by
// 20 %). So throughput is measured in many short windows, the targets taking turns, and Switchyard's
// ratios are taken within each round, where the drift is shared, then the median of those.
//
// The same holds for tail latency, more so: the host's speed changes within seconds (the same
// 15,000 requests through Switchyard took 1.7 s of CPU in one window and 4.3 s in the next, with no
// steal time reported), and at a fixed 3,000 RPS a slow second pushes a proxy towards saturation,
// where its queue and its p99 explode. So the open-loop load is also cut into 1-s slices, the
// targets taking turns slice by slice, and each target's p99 is taken over all its slices of a round.
const plan = quick
  ? {
      warmupSeconds: 3,
      maxSteadySlices: 2,
      throughputRounds: 3,
      rpsSeconds: 1,
      latencyRounds: 1,
      p50Seconds: 1,
      openLoopSlices: 1,
      streamProbes: 30,
      concurrentStreams: 1_000,
      streamsFor: ['switchyard'] as TargetName[],
    }
  : {
      warmupSeconds: 6,
      maxSteadySlices: 8,
      throughputRounds: 7,
      rpsSeconds: 3,
      latencyRounds: 7,
      p50Seconds: 2,
      openLoopSlices: 3,
      streamProbes: 100,
      concurrentStreams: 1_000,
      streamsFor: ['nginx', 'bare', 'switchyard', 'portkey'] as TargetName[],
    };
const OPEN_LOOP_SLICE_SECONDS = 1;
// Warm-up: bench/warm-up.ts.
const warmUpNotes: string[] = [];
const RATES = [300, 3_000];

function restart(
  name: TargetName,
  context: BenchContext,
  portkey: string | null,
  scenarios: { pool: PoolSetup | null; limits: LimitsSetup | null; features: FeaturesSetup | null },
): Promise<Target> {
  const { pool, limits, features } = scenarios;
  switch (name) {
    case 'pool':
    case 'pool-redis':
    case 'pool-no-infer':
    case 'baseline-pool':
      return startPoolTarget(context, name, pool as PoolSetup);
    case 'limits':
    case 'limits-redis':
      return startLimitsTarget(context, name, limits as LimitsSetup);
    case 'features':
      return startFeaturesTarget(context, features as FeaturesSetup);
    case 'nginx':
      return startNginx(context);
    case 'bare':
      return startBareProxy(context);
    case 'switchyard':
      return startSwitchyard(context);
    case 'baseline':
      return startSwitchyard(context, baseline as SwitchyardBuild);
    case 'portkey':
      return startPortkey(context, portkey as string);
    default:
      return Promise.resolve(direct(context));
  }
}

async function main(): Promise<void> {
  // Pin ourselves (the load generator) to one core; the servers go to the other.
  execFileSync('taskset', ['-cp', LOAD_CORE, String(process.pid)], { stdio: 'ignore' });
  const notes: string[] = [];
  ensureTools(notes);
  const portkey = ensurePortkey(root, withPortkey, notes);
  const pool = withPool ? await preparePool(baseline) : null;
  const limits = withLimits ? await prepareLimits() : null;
  const features = withFeatures ? await prepareFeatures() : null;
  if (quick && !withPortkey) notes.push('Portkey is compared in the full run; add `--portkey` to a quick run to include it');
  const noiseSeconds = quick ? 1 : 5;
  say('measuring machine noise');
  const noiseBefore = await measureMachineNoise(noiseSeconds);
  const workDirectory = mkdtempSync(join(tmpdir(), 'switchyard-bench-'));
  // `--upstream-core load`: the fake upstream beside the load generator, off the proxies' core, so
  // that a proxy's CPU per request is not shaped by how it shares a core with its upstream.
  const upstreamOnLoadCore = argumentValue('--upstream-core') === 'load';
  if (upstreamOnLoadCore) notes.push("the fake upstream ran on the load generator's core (`--upstream-core load`), not beside the proxies");
  const upstream = await spawnPinned('node', [join(root, 'dist-bench', 'fast-upstream.js'), '0'], upstreamOnLoadCore ? { core: LOAD_CORE } : {});
  const context: BenchContext = {
    root,
    workDirectory,
    upstreamOrigin: `http://127.0.0.1:${String(upstream.first['port'])}`,
    upstreamPid: upstream.child.pid as number,
  };
  if (messagesOnly) {
    try {
      const markdown = renderMessagesSection(await runMessagesScenario(context, messagesPlan, say));
      process.stdout.write(`${markdown}\n`);
    } finally {
      upstream.child.kill('SIGTERM');
      rmSync(workDirectory, { recursive: true, force: true });
    }
    return;
  }
  if (nativeOnly) {
    try {
      const native = await runNativeScenario(context, nativePlan, say);
      const markdown = renderNativeSection(native);
      process.stdout.write(`${markdown}\n`);
      mkdirSync(join(root, 'bench', 'results'), { recursive: true });
      writeFileSync(join(root, 'bench', 'results', 'latest-native.md'), markdown);
      writeFileSync(join(root, 'bench', 'results', 'latest-native.json'), `${JSON.stringify(native, null, 2)}\n`);
    } finally {
      upstream.child.kill('SIGTERM');
      rmSync(workDirectory, { recursive: true, force: true });
    }
    return;
  }
  // Filled as they start, so that the `finally` below stops those that did when a later one fails
  // (the limits scenario refuses to run without its limits in force).
  const targets: Target[] = [direct(context)];
  const samples = new Map<TargetName, Samples>();
  const sample = (target: Target) => samples.get(target.name) as Samples;
  const notePeak = (target: Target) => {
    sample(target).peak = Math.max(sample(target).peak, rssBytes(target.pid));
  };

  try {
    targets.push(
      ...(await Promise.all([
        startNginx(context),
        startBareProxy(context),
        startSwitchyard(context),
        ...(baseline === null ? [] : [startSwitchyard(context, baseline)]),
        ...(portkey === null ? [] : [startPortkey(context, portkey)]),
      ])),
    );
    if (pool !== null) targets.push(...(await startPoolTargets(context, pool)));
    if (limits !== null) targets.push(...(await startLimitsTargets(context, limits)));
    if (features?.redis != null) targets.push(await startFeaturesTarget(context, features));
    say(`targets: ${targets.map((target) => target.label).join(', ')}`);
    for (const target of targets)
      samples.set(target.name, { rps: [], cpu: [], stateCpu: [], p50: [], openLoop: {}, firstByte: [], total: [], failures: 0, peak: 0, idle: 0 });

    // Idle: started, ready, no traffic yet. Then warm every target up (JIT, connection pools).
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const target of targets) sample(target).idle = rssBytes(target.pid);
    const pools = new Map(targets.map((target) => [target.name, openLoopPool(target)]));
    for (const target of targets) {
      const warm = await warmUp(target, workDirectory, plan, warmUpNotes);
      // The first open-loop run pays for opening connections and compiling code: run one and discard it.
      const rate = RATES.filter((candidate) => candidate <= warm.requestsPerSecond * 0.9).at(-1);
      if (rate !== undefined) await openLoop(target, rate, 1, pools.get(target.name) as ReturnType<typeof openLoopPool>);
    }
    for (let round = 1; round <= plan.throughputRounds; round++) {
      say(`throughput round ${round}/${plan.throughputRounds}`);
      for (const target of targets) {
        const stateBefore = await target.stateCpuSeconds?.();
        const cpuBefore = cpuSeconds(target.pid);
        const loaded = await wrk(target, 64, plan.rpsSeconds, workDirectory);
        const cpu = cpuSeconds(target.pid) - cpuBefore;
        const stateAfter = await target.stateCpuSeconds?.();
        notePeak(target);
        const entry = sample(target);
        entry.rps.push(loaded.requestsPerSecond);
        entry.cpu.push((cpu * 1_000_000) / loaded.requests);
        if (stateBefore !== undefined && stateAfter !== undefined) entry.stateCpu.push(((stateAfter - stateBefore) * 1_000_000) / loaded.requests);
        entry.failures += loaded.failures;
      }
    }
    for (let round = 1; round <= plan.latencyRounds; round++) {
      say(`latency round ${round}/${plan.latencyRounds}`);
      for (const target of targets) {
        const single = await wrk(target, 1, plan.p50Seconds, workDirectory);
        sample(target).p50.push(single.p50Ms);
        sample(target).failures += single.failures;
      }
      for (const rate of RATES) {
        // A target that cannot sustain the rate would only queue: report it as saturated instead.
        const able = targets.filter((target) => rate <= median(sample(target).rps) * 0.9);
        const runs = able.map((target) => ({ target, slices: [] as OpenLoopResult[], cpu: 0, upstreamCpu: 0, seconds: 0 }));
        for (let slice = 0; slice < plan.openLoopSlices; slice++) {
          for (const run of runs) {
            const cpuBefore = cpuSeconds(run.target.pid);
            const upstreamBefore = cpuSeconds(context.upstreamPid);
            const startedAt = performance.now();
            run.slices.push(await openLoop(run.target, rate, OPEN_LOOP_SLICE_SECONDS, pools.get(run.target.name) as ReturnType<typeof openLoopPool>));
            run.seconds += (performance.now() - startedAt) / 1_000;
            run.cpu += cpuSeconds(run.target.pid) - cpuBefore;
            run.upstreamCpu += cpuSeconds(context.upstreamPid) - upstreamBefore;
          }
        }
        for (const { target, slices, cpu, upstreamCpu, seconds } of runs) {
          const pooled = pooledOpenLoop(slices);
          const slot = (sample(target).openLoop[rate] ??= { p99: [], cpu: [], busy: [], failed: 0 });
          slot.p99.push(pooled.p99Ms);
          slot.cpu.push((cpu * 1_000_000) / Math.max(1, pooled.completed + pooled.failed));
          // The server core is shared by the proxy and the fake upstream: how much of it they kept
          // busy tells how near saturation a rate was, which is where a p99 climbs.
          slot.busy.push((target.name === 'direct' ? cpu : cpu + upstreamCpu) / Math.max(seconds, 1e-9));
          slot.failed += pooled.failed;
        }
      }
      for (const target of targets) {
        const streamed = await streamProbe(target, plan.streamProbes);
        sample(target).firstByte.push(streamed.firstByteMs);
        sample(target).total.push(streamed.totalMs);
        notePeak(target);
      }
    }
    // A gateway that went on without its Redis (timeouts, its breaker) measured less than its scenario.
    for (const target of targets) {
      const skipped = await target.stateSkipped?.();
      if (skipped !== undefined && skipped > 0)
        notes.push(
          `${target.label}: went on without Redis for ${skipped} state operations during the rounds (timeouts, its breaker): its figures measured less than every feature`,
        );
    }
    await Promise.all([...pools.values()].map((pool) => pool.close()));
    // Memory per stream is measured on fresh instances: after the load rounds a heap has grown, and
    // a thousand streams would fit in it without adding anything, hiding their real cost.
    const streams = new Map<TargetName, Awaited<ReturnType<typeof concurrentStreams>>>();
    // With a baseline build, its memory per stream is measured too: a change's cost is read side by side.
    // So is each pool variant's in the full run (sessions and in-flight counts are per-stream state).
    const poolStreams = quick || pool === null ? [] : poolTargetNames(pool).filter((name) => name !== 'pool-no-infer');
    // The limits scenario's memory state, in the quick run too: issue 19 bounds it against the
    // baseline's (its Redis variant in the full run only, as the pool's).
    const limitsStreams = limits === null ? [] : quick ? ['limits' as const] : limitsTargetNames(limits);
    // Every feature on, in the quick run too: issue 32 asks for its memory per open stream.
    const featuresStreams = features?.redis != null ? ['features' as const] : [];
    const streamsFor: TargetName[] = [
      ...plan.streamsFor,
      ...(baseline === null ? [] : ['baseline' as const]),
      ...poolStreams,
      ...limitsStreams,
      ...featuresStreams,
    ];
    for (const name of streamsFor) {
      const index = targets.findIndex((candidate) => candidate.name === name);
      const old = targets[index];
      if (old === undefined) continue;
      say(`restarting ${old.label} for the memory test`);
      await old.stop();
      const fresh = await restart(name, context, portkey, { pool, limits, features });
      targets[index] = fresh;
      await streamProbe(fresh, 20);
      say(`${plan.concurrentStreams} concurrent slow streams through a fresh ${fresh.label}`);
      const result = await concurrentStreams(fresh, plan.concurrentStreams);
      streams.set(name, result);
      sample(fresh).peak = Math.max(sample(fresh).peak, result.peakRssBytes);
      if (result.completed < plan.concurrentStreams)
        notes.push(`${fresh.label}: ${plan.concurrentStreams - result.completed} of ${plan.concurrentStreams} slow streams did not complete`);
    }

    const native = withNative ? await runNativeScenario(context, nativePlan, say) : null;
    const messages = withMessages && !nativeOnly ? await runMessagesScenario(context, messagesPlan, say) : null;

    const figures: Partial<Record<TargetName, TargetFigures>> = {};
    for (const target of targets) {
      const entry = sample(target);
      const stream = streams.get(target.name);
      const rps = median(entry.rps);
      figures[target.name] = {
        label: target.label,
        requestsPerSecond: rps,
        cpuMicrosecondsPerRequest: median(entry.cpu),
        p50Ms: median(entry.p50),
        openLoop: Object.fromEntries(Object.entries(entry.openLoop).map(([rate, slot]) => [rate, { p99Ms: median(slot.p99), failed: slot.failed }])),
        streamFirstByteMs: median(entry.firstByte),
        streamTotalMs: median(entry.total),
        bytesPerStream: stream?.bytesPerStream ?? null,
        streamsCompleted: stream?.completed ?? null,
        idleRssBytes: entry.idle,
        peakRssBytes: entry.peak,
        failures: entry.failures,
        ...(entry.stateCpu.length === 0 ? {} : { stateCpuMicrosecondsPerRequest: median(entry.stateCpu) }),
      };
      if (entry.failures > 0) notes.push(`${target.label}: ${entry.failures} failed responses under closed-loop load`);
      for (const rate of RATES)
        if (entry.openLoop[rate] === undefined) notes.push(`${target.label}: not run at ${rate} RPS open loop (saturates at ~${Math.round(rps)} RPS)`);
    }
    const paired = pairedRounds(samples, RATES);
    if (paired !== null) {
      notes.push(
        `Switchyard ÷ floor RPS, round by round: ${paired.rpsVsFloor.map((value) => value.toFixed(2)).join(', ')} (median ${median(paired.rpsVsFloor).toFixed(2)})`,
      );
      if (paired.cpuVsBaseline !== undefined && baseline !== null) {
        notes.push(
          `Switchyard ÷ ${baseline.label} CPU per request, round by round: ${paired.cpuVsBaseline.map((value) => value.toFixed(2)).join(', ')} (median ${median(paired.cpuVsBaseline).toFixed(2)})`,
        );
      }
      for (const [rate, values] of Object.entries(paired.p99OverheadMs)) {
        notes.push(
          `Switchyard p99 overhead @${rate} RPS, round by round: ${values.map((value) => value.toFixed(2)).join(', ')} ms (median ${median(values).toFixed(2)})`,
        );
      }
    }
    // The host's speed in each round, as the CPU each proxy spent per request at the highest rate:
    // a round in which every proxy needed far more CPU than usual was a slow host, not a slow proxy.
    const topRate = RATES[RATES.length - 1] as number;
    for (const name of PROXIES) {
      const values = samples.get(name)?.openLoop[topRate]?.cpu;
      const label = targets.find((target) => target.name === name)?.label;
      if (values !== undefined && label !== undefined)
        notes.push(`${label}: CPU µs per request @${topRate} RPS, round by round: ${values.map((value) => value.toFixed(0)).join(', ')}`);
    }
    for (const name of ['direct', ...PROXIES] as const) {
      const busy = samples.get(name)?.openLoop[topRate]?.busy;
      const label = targets.find((target) => target.name === name)?.label;
      if (busy !== undefined && label !== undefined) {
        notes.push(
          `${label}: server core busy @${topRate} RPS (${name === 'direct' ? 'the upstream' : 'proxy + upstream'}), round by round: ${busy.map((value) => `${Math.round(value * 100)} %`).join(', ')}`,
        );
      }
    }
    const direct = figures.direct;
    if (direct !== undefined) {
      // No proxy makes the upstream faster, yet some runs measured direct slower than a proxied path
      // (p50 0.81 ms direct, 0.22 ms through nginx): the machine, not the targets. An overhead
      // against such a direct figure flatters every proxy, so the report says so.
      for (const name of ['nginx', 'bare', 'switchyard'] as const) {
        const figure = figures[name];
        if (figure === undefined) continue;
        if (figure.p50Ms < direct.p50Ms)
          notes.push(
            `${figure.label}: p50 @1 conn below direct's (${figure.p50Ms.toFixed(3)} < ${direct.p50Ms.toFixed(3)} ms); direct's latency is no floor in this run`,
          );
        if (figure.streamFirstByteMs < direct.streamFirstByteMs)
          notes.push(
            `${figure.label}: streamed first byte before direct's (${figure.streamFirstByteMs.toFixed(3)} < ${direct.streamFirstByteMs.toFixed(3)} ms); direct's latency is no floor in this run`,
          );
      }
    }
    const noiseAfter = await measureMachineNoise(noiseSeconds);
    notes.push(describeNoise('before', noiseBefore), describeNoise('after', noiseAfter), ...warmUpNotes);
    notes.push('CPU per request is the proxy process alone (for direct: the upstream); `direct` has no proxy.');
    notes.push('Absolute figures swing up to 2× between runs on these machines; compare the ratios, all measured in this run.');
    const report: Report = {
      date: new Date().toISOString(),
      mode: quick ? 'quick' : 'full',
      rounds: { throughput: plan.throughputRounds, latency: plan.latencyRounds },
      rates: RATES,
      paired,
      concurrentStreams: plan.concurrentStreams,
      figures,
      machineNoise: { before: noiseBefore, after: noiseAfter },
      notes,
    };
    const roundCpu = (name: TargetName): RoundCpu | undefined => {
      const entry = samples.get(name);
      return entry === undefined ? undefined : { throughput: entry.cpu, openLoop: entry.openLoop[topRate]?.cpu ?? [] };
    };
    if (pool !== null) report.pool = poolSection(poolTargetNames(pool), roundCpu, topRate, describePool(pool));
    if (limits !== null) report.limits = limitsSection(limitsTargetNames(limits), roundCpu, topRate, describeLimits(limits));
    if (features?.redis != null) {
      report.features = featuresSection((name) => {
        const entry = samples.get(name);
        return entry === undefined ? undefined : { cpu: entry.cpu, stateCpu: entry.stateCpu };
      }, describeFeatures(features));
    } else if (features !== null) notes.push(...features.notes);
    if (native !== null) report.native = native;
    if (messages !== null) report.messages = messages;
    const markdown = renderReport(report, [
      ...renderPoolSection(report),
      ...renderLimitsSection(report),
      ...renderFeaturesSection(report),
      ...(native === null ? [] : [renderNativeSection(native)]),
      ...(messages === null ? [] : [renderMessagesSection(messages)]),
    ]);
    process.stdout.write(`${markdown}\n`);
    mkdirSync(join(root, 'bench', 'results'), { recursive: true });
    writeFileSync(join(root, 'bench', 'results', quick ? 'latest-quick.md' : 'latest.md'), markdown);
    writeFileSync(join(root, 'bench', 'results', quick ? 'latest-quick.json' : 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  } finally {
    await Promise.all(targets.map((target) => target.stop()));
    // After the gateways are gone, so that none writes its in-flight counts back.
    if (pool !== null) say(await cleanupPool(pool));
    if (limits !== null) say(await cleanupLimits(limits));
    if (features !== null) say(await cleanupFeatures(features));
    upstream.child.kill('SIGTERM');
    rmSync(workDirectory, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});

/** The value after `flag` on the command line, if given. */
function argumentValue(flag: string): string | undefined {
  const index = process.argv.indexOf(flag);
  return index === -1 ? undefined : process.argv[index + 1];
}
