import { join } from 'node:path';
import { firstLine } from './bench-setup.js';
import { connectBenchRedis, describeRedis, redisCpuSeconds, removeBenchKeys, type BenchRedis } from './bench-redis.js';
import { LIVE_SESSIONS, NEW_SESSION_EVERY, SessionMix } from './session-mix.js';
import { launchSwitchyard, type BenchContext, type PoolTargetName, type SwitchyardBuild, type Target } from './targets.js';

/**
 * The pool scenario: Switchyard with a chat model served by a pool of four credentials (four
 * `upstreams[]` entries, all on the bench's fake upstream, so what differs from the plain
 * scenario is the routing, not the upstream), strategy `weighted`, and traffic of which half
 * carries an `X-Session-Id` (bench/session-mix.ts). Variants, each a target of its own taking
 * turns with the others:
 * - `pool`: memory state, `routing.infer_sessions` at its default (true), as users run it;
 * - `pool-redis`: the same with Redis state (skipped when Redis does not answer);
 * - `pool-no-infer`: memory state with `infer_sessions: false`, so the inference's cost shows;
 * - `baseline-pool`: the `--baseline` build with the same config, or, when its schema refuses the
 *   keys it predates (`strategy`), with the four weighted credentials alone and the same traffic.
 */
const CREDENTIALS = [
  { id: 'pool-a', weight: 4 },
  { id: 'pool-b', weight: 3 },
  { id: 'pool-c', weight: 2 },
  { id: 'pool-d', weight: 1 },
] as const;

export interface PoolSetup {
  redis: BenchRedis | null;
  baseline: SwitchyardBuild | null;
  /** Whether the baseline accepted the full config; decided on its first start, kept for restarts. */
  baselineFullConfig: boolean | null;
  /** Targets that could not be started (the baseline's pool), left out with a note. */
  skipped: Set<PoolTargetName>;
  notes: string[];
  /** `pool-redis`'s `state.request_timeout_ms`; the gateway's default when unset (the feature ladder sets the every-feature scenario's). */
  stateRequestTimeoutMs?: number;
}

/** Checks Redis and picks this run's key prefix; a Redis that does not answer skips its variant with a note. */
export async function preparePool(baseline: SwitchyardBuild | null): Promise<PoolSetup> {
  const { redis, skipped } = await connectBenchRedis('switchyard-bench');
  return { redis, baseline, baselineFullConfig: null, skipped: new Set(), notes: skipped === null ? [] : [`Redis state: skipped, ${skipped}`] };
}

/** The pool targets this run measures. */
export function poolTargetNames(setup: PoolSetup): PoolTargetName[] {
  const all: PoolTargetName[] = [
    'pool',
    ...(setup.redis === null ? [] : ['pool-redis' as const]),
    'pool-no-infer',
    ...(setup.baseline === null ? [] : ['baseline-pool' as const]),
  ];
  return all.filter((name) => !setup.skipped.has(name));
}

/**
 * Every pool target started. A baseline that cannot run the scenario at all is left out with a
 * note rather than failing the run; any other failure stops what did start and is thrown (the
 * bench then removes the Redis keys and closes its connection, `cleanupPool`).
 */
export async function startPoolTargets(context: BenchContext, setup: PoolSetup): Promise<Target[]> {
  const names = poolTargetNames(setup);
  const results = await Promise.allSettled(names.map((name) => startPoolTarget(context, name, setup)));
  const started = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const index = names.indexOf('baseline-pool');
  const baselineResult = results[index];
  if (baselineResult?.status === 'rejected') {
    setup.skipped.add('baseline-pool');
    setup.notes.push(`Baseline: skipped, the baseline build did not start with either config (${firstLine(baselineResult.reason)})`);
  }
  const failure = results.find((result, at) => result.status === 'rejected' && at !== index);
  if (failure?.status === 'rejected') {
    await Promise.all(started.map((target) => target.stop()));
    throw failure.reason;
  }
  return started;
}

export async function startPoolTarget(context: BenchContext, name: PoolTargetName, setup: PoolSetup): Promise<Target> {
  const own = { root: context.root, name, label: '' };
  const directory = join(context.workDirectory, name);
  let target: Target;
  switch (name) {
    case 'pool':
      target = await launchSwitchyard(
        context,
        { ...own, label: 'pool ×4, memory' },
        poolConfig(context, directory, { strategy: true, inferSessions: true, redis: null }),
      );
      break;
    case 'pool-no-infer':
      target = await launchSwitchyard(
        context,
        { ...own, label: 'pool ×4, memory, no inference' },
        poolConfig(context, directory, { strategy: true, inferSessions: false, redis: null }),
      );
      break;
    case 'pool-redis': {
      const redis = setup.redis as BenchRedis;
      target = await launchSwitchyard(
        context,
        { ...own, label: 'pool ×4, Redis' },
        poolConfig(context, directory, { strategy: true, inferSessions: true, redis, requestTimeoutMs: setup.stateRequestTimeoutMs }),
      );
      target.stateCpuSeconds = () => redisCpuSeconds(redis.client);
      break;
    }
    case 'baseline-pool':
      target = await startBaselinePool(context, setup);
      break;
  }
  target.sessions = new SessionMix();
  return target;
}

/**
 * The baseline with the pool's config if its schema takes it (then both builds run the same
 * config), else with only the keys every build knows: four credentials and their weights. Such a
 * build ignores `X-Session-Id` and infers nothing, so `pool` ÷ `baseline-pool` is then what the same
 * config and traffic cost after the upgrade, routing by session included.
 */
async function startBaselinePool(context: BenchContext, setup: PoolSetup): Promise<Target> {
  const build = setup.baseline as SwitchyardBuild;
  const directory = join(context.workDirectory, 'baseline-pool');
  const launch = (full: boolean) =>
    launchSwitchyard(
      context,
      { root: build.root, name: 'baseline-pool', label: `${build.label}, pool ×4${full ? '' : ' (weights only)'}` },
      poolConfig(context, directory, { strategy: full, inferSessions: true, redis: null }),
    );
  if (setup.baselineFullConfig !== null) return launch(setup.baselineFullConfig);
  try {
    const target = await launch(true);
    setup.baselineFullConfig = true;
    setup.notes.push(`Baseline: ${build.label} accepted the pool's config; \`pool ×4, memory\` and it ran the same config and traffic`);
    return target;
  } catch (error) {
    setup.baselineFullConfig = false;
    setup.notes.push(
      `Baseline: ${build.label} refused the pool's config (${firstLine(error)}); it ran the same four credentials and weights without the \`strategy\` key, and the same traffic, whose \`X-Session-Id\` it does not route by. So \`pool ×4, memory\` ÷ it is what the same config and traffic cost after an upgrade, session routing and inference included`,
    );
    return launch(false);
  }
}

/**
 * The pool scenario's config, in `directory`. `modelLines` go into both models and
 * `requestTimeoutMs` into `state` (the every-feature scenario's, bench/features-scenario.ts),
 * nothing else differing.
 */
export function poolConfig(
  context: BenchContext,
  directory: string,
  keys: { strategy: boolean; inferSessions: boolean; redis: BenchRedis | null; modelLines?: readonly string[]; requestTimeoutMs?: number },
): string {
  const routes = (model: string) =>
    CREDENTIALS.map((credential) => `      - { upstream: ${credential.id}, model: ${model}, weight: ${credential.weight} }`).join('\n');
  // `state` and `routing` are written only where they differ from the defaults, so that the memory
  // variant differs from a config an older build accepts by `strategy` alone.
  return [
    'server: { host: 127.0.0.1, port: 0 }',
    `database: { url: "sqlite:${join(directory, 'switchyard.db')}" }`,
    'logging: { level: info }',
    ...(keys.redis === null
      ? []
      : [
          `state: { url: "${keys.redis.url}", key_prefix: "${keys.redis.keyPrefix}"${keys.requestTimeoutMs === undefined ? '' : `, request_timeout_ms: ${keys.requestTimeoutMs}`} }`,
        ]),
    ...(keys.inferSessions ? [] : ['routing: { infer_sessions: false }']),
    'upstreams:',
    ...CREDENTIALS.map(
      (credential) => `  - { id: ${credential.id}, provider: openai, base_url: "${context.upstreamOrigin}/v1", api_key: sk-bench-${credential.id} }`,
    ),
    'models:',
    '  - id: bench-model',
    '    type: chat',
    ...(keys.strategy ? ['    strategy: weighted'] : []),
    ...(keys.modelLines ?? []),
    '    routes:',
    routes('gpt-4o-mini'),
    // The memory test's slow streams go through the same pool, sessions and all.
    '  - id: bench-model-slow',
    '    type: chat',
    ...(keys.strategy ? ['    strategy: weighted'] : []),
    ...(keys.modelLines ?? []),
    '    routes:',
    routes('slow-stream'),
    '',
  ].join('\n');
}

/** What the report says about the scenario: how it was built, and what was skipped or compared. */
export function describePool(setup: PoolSetup): string[] {
  const redis = setup.redis === null ? [] : [describeRedis(setup.redis)];
  return [`Built: ${describePoolAndTraffic()}`, ...redis, ...setup.notes];
}

/** The pool and the traffic it is sent, for a scenario's remarks. */
export function describePoolAndTraffic(): string {
  return `a chat model over 4 credentials (weights 4, 3, 2, 1, all on the fake upstream), strategy \`weighted\`; every other request carries \`X-Session-Id\`, drawn from ${LIVE_SESSIONS.toLocaleString('en-US')} live sessions of which one in ${NEW_SESSION_EVERY} session requests opens a new one; the other half carries none, and with inference on they all get one inferred id (the bench's body is the same for every request: one conversation)`;
}

/** Removes this run's keys from Redis (call once the gateways using it are stopped); says what it did. */
export function cleanupPool(setup: PoolSetup): Promise<string> {
  return removeBenchKeys(setup.redis, 'pool scenario');
}
