import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { connectBenchRedis, describeRedis, redisCpuSeconds, removeBenchKeys, type BenchRedis } from './bench-redis.js';
import { say } from './bench-setup.js';
import { chatBody, LOAD_CORE, median } from './load.js';
import { cpuSeconds } from './process-stats.js';
import { LIVE_SESSIONS, NEW_SESSION_EVERY, SessionMix } from './session-mix.js';
import { makeTeamsAndTokens, TEAM_LIMITS } from './scale-tokens.js';
import { fixedHeadersScript, rotatingTokensScript, wrkScript, type WrkCount } from './scale-wrk.js';
import { CHAT_PATH, launchSwitchyard, plainChatConfig, spawnPinned, startBareProxy, type BenchContext, type Target } from './targets.js';

/**
 * How Switchyard's CPU per request grows with scale (issue 32, item 5), beside the floor (the bare
 * undici proxy) in the same run, the targets taking turns round by round:
 * - pool size: a chat model whose pool has 1, 16 and 256 credentials (`upstreams[]` entries, all on
 *   the fake upstream), traffic with the pool scenario's session mix; memory state, and with
 *   `--redis` Redis state too;
 * - tokens and teams: 1,000 teams with limits, 10 tokens each, the load spread round robin over
 *   all 10,000 tokens, beside the same gateway with all load on one of its tokens and beside the
 *   same config whose database holds a single team and token.
 * Each figure is the gateway's CPU (plus Redis's, where Redis state is used) per request; its
 * ratio to the floor's and to its group's first row (1 credential, one token) is taken within each
 * round, then the median of those.
 *
 *   node dist-bench/scale-bench.js [--rounds N] [--seconds S] [--quick] [--redis]
 *     [--only pool|tokens] [--profile KEY[,KEY]] [--profile-dir DIR]
 */

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const rounds = Number(argumentValue('--rounds') ?? (quick ? 2 : 3));
const seconds = Number(argumentValue('--seconds') ?? (quick ? 2 : 3));
const withRedis = argv.includes('--redis');
const only = argumentValue('--only');
/** Rows' keys, comma-separated (e.g. `pool-256,pool-1`): those gateways run under `node --cpu-prof`, each profile written when it stops, in DIR/<key>/. */
const profiled = argumentValue('--profile')?.split(',') ?? [];
const profileDirectory = resolve(argumentValue('--profile-dir') ?? join(root, 'bench', 'results', 'profiles'));
// As the main bench: a Node gateway needs several seconds of load before its JIT settles, then
// 2-s slices until two agree within 5 %.
const warmUpPlan = quick ? { seconds: 3, maxSlices: 2 } : { seconds: 6, maxSlices: 5 };
const STEADY_SLICE_SECONDS = 2;
const STEADY_TOLERANCE = 0.05;
const CONNECTIONS = 64;
const POOL_SIZES = [1, 16, 256] as const;
const TEAMS = 1_000;
const TOKENS_PER_TEAM = 10;
/** What tells that a response went through the team's limits (sent for a holder with `rpm` or `tpm`). */
const LIMITS_HEADER = 'x-ratelimit-limit-requests';

type Group = 'pool' | 'pool-redis' | 'tokens' | 'tokens-redis';

/** One row of the table: a gateway process and the load it is measured under. */
interface Row {
  key: string;
  group: Group | 'floor';
  label: string;
  target: Target;
  /** Writes the row's wrk script as it must be for the next run (a session mix goes on where it stopped). */
  script: () => string;
  afterRun: (requests: number) => void;
  /**
   * Requests the warm-up sends at least: for the rows spread over 10,000 tokens, one round of them
   * all, since a team's first request rebuilds its quotas from the request log (a one-off per
   * process, not the steady cost).
   */
  warmRequests: number;
  cpu: number[];
  /** The floor's CPU µs per request in the run just before this row's group, round by round. */
  floorCpu: number[];
  stateCpu: number[];
  rps: number[];
  failures: number;
}

interface Setup {
  context: BenchContext;
  redis: BenchRedis | null;
  /** Processes to stop at the end, each once (two rows may share one). */
  targets: Target[];
  rows: Row[];
  notes: string[];
}

function newRow(key: string, group: Row['group'], label: string, target: Target, script: Row['script'], afterRun: Row['afterRun'] = () => undefined): Row {
  return { key, group, label, target, script, afterRun, warmRequests: 0, cpu: [], floorCpu: [], stateCpu: [], rps: [], failures: 0 };
}

function nodeArgumentsFor(key: string): string[] {
  if (!profiled.includes(key)) return [];
  mkdirSync(join(profileDirectory, key), { recursive: true });
  return ['--cpu-prof', '--cpu-prof-dir', join(profileDirectory, key)];
}

/** A gateway of this checkout in its own directory under the run's (launchSwitchyard keys its directory by name). */
function launch(setup: Setup, key: string, label: string, config: (directory: string) => string): Promise<Target> {
  const context = { ...setup.context, workDirectory: join(setup.context.workDirectory, key) };
  const directory = join(context.workDirectory, 'switchyard');
  return launchSwitchyard(context, { root, name: 'switchyard', label }, config(directory), nodeArgumentsFor(key));
}

function stateLines(redis: BenchRedis | null): string[] {
  return redis === null ? [] : [`state: { url: "${redis.url}", key_prefix: "${redis.keyPrefix}" }`];
}

/** A chat model over `size` credentials of the fake upstream, weight 1 each, strategy `weighted` (the default). */
function poolConfig(context: BenchContext, directory: string, size: number, redis: BenchRedis | null): string {
  const ids = Array.from({ length: size }, (_, index) => `pool-${String(index).padStart(3, '0')}`);
  return [
    'server: { host: 127.0.0.1, port: 0 }',
    `database: { url: "sqlite:${join(directory, 'switchyard.db')}" }`,
    'logging: { level: info }',
    ...stateLines(redis),
    'upstreams:',
    ...ids.map((id) => `  - { id: ${id}, provider: openai, base_url: "${context.upstreamOrigin}/v1", api_key: sk-bench-${id} }`),
    'models:',
    '  - id: bench-model',
    '    type: chat',
    '    routes:',
    ...ids.map((id) => `      - { upstream: ${id}, model: gpt-4o-mini }`),
    '',
  ].join('\n');
}

async function addPoolRows(setup: Setup, redis: BenchRedis | null): Promise<void> {
  const group: Group = redis === null ? 'pool' : 'pool-redis';
  const started = await Promise.all(
    POOL_SIZES.map(async (size) => {
      const key = `${group}-${size}`;
      const label = `pool of ${size}, ${redis === null ? 'memory' : 'Redis'}`;
      const target = await launch(setup, key, label, (directory) => poolConfig(setup.context, directory, size, redis));
      setup.targets.push(target);
      if (redis !== null) target.stateCpuSeconds = () => redisCpuSeconds(redis.client);
      return { key, label, target };
    }),
  );
  for (const { key, label, target } of started) {
    const mix = new SessionMix();
    const script = join(setup.context.workDirectory, `${key}.lua`);
    setup.rows.push(
      newRow(
        key,
        group,
        label,
        target,
        () => {
          fixedHeadersScript(script, target.headers, mix.wrkRequestFunction());
          return script;
        },
        (requests) => mix.advance(requests),
      ),
    );
  }
}

/** The plain chat config (its two routes, SQLite log), with the database at `databaseDirectory` (two gateways may share one). */
function tokensConfig(context: BenchContext, databaseDirectory: string, redis: BenchRedis | null): string {
  return plainChatConfig(context, databaseDirectory, { topLevel: stateLines(redis) });
}

/**
 * A gateway whose database holds `teams` × `tokensPerTeam` tokens, made before it starts (so that
 * what is measured is a process that loaded them all at start, as one does after a deploy).
 */
async function tokensGateway(setup: Setup, key: string, label: string, teams: number, tokensPerTeam: number): Promise<{ target: Target; secrets: string[] }> {
  const databaseDirectory = join(setup.context.workDirectory, key, 'switchyard');
  mkdirSync(databaseDirectory, { recursive: true });
  const configPath = join(databaseDirectory, 'batch.yaml');
  writeFileSync(configPath, tokensConfig(setup.context, databaseDirectory, null));
  const made = await makeTeamsAndTokens(root, configPath, teams, tokensPerTeam);
  setup.notes.push(
    `${label}: ${made.teams.toLocaleString('en-US')} teams and ${made.secrets.length.toLocaleString('en-US')} tokens made in ${made.seconds.toFixed(1)} s (TeamService and TokenService of dist/, in one process, before the gateway started)`,
  );
  const target = await launch(setup, key, label, () => tokensConfig(setup.context, databaseDirectory, null));
  setup.targets.push(target);
  return { target, secrets: made.secrets };
}

/** A second gateway on the same database (SQLite is shared by processes as the CLI shares it), with Redis state. */
async function redisTwin(setup: Setup, of: string, key: string, label: string): Promise<Target> {
  const redis = setup.redis as BenchRedis;
  const databaseDirectory = join(setup.context.workDirectory, of, 'switchyard');
  const target = await launch(setup, key, label, () => tokensConfig(setup.context, databaseDirectory, redis));
  target.stateCpuSeconds = () => redisCpuSeconds(redis.client);
  setup.targets.push(target);
  return target;
}

async function addTokenRows(setup: Setup): Promise<void> {
  const [single, many] = await Promise.all([
    tokensGateway(setup, 'tokens-1', 'one team, one token', 1, 1),
    tokensGateway(
      setup,
      'tokens-10k',
      `${TEAMS.toLocaleString('en-US')} teams, ${(TEAMS * TOKENS_PER_TEAM).toLocaleString('en-US')} tokens`,
      TEAMS,
      TOKENS_PER_TEAM,
    ),
  ]);
  const oneToken = (secret: string) => ({ ...single.target.headers, authorization: `Bearer ${secret}` });
  const fixed = (key: string, secret: string) => {
    const path = join(setup.context.workDirectory, `${key}.lua`);
    fixedHeadersScript(path, oneToken(secret));
    return () => path;
  };
  const rotating = (key: string): Pick<Row, 'script' | 'afterRun'> => {
    const path = join(setup.context.workDirectory, `${key}.lua`);
    let position = 0;
    return {
      script: () => {
        rotatingTokensScript(path, many.secrets, position);
        return path;
      },
      afterRun: (requests) => {
        position += requests;
      },
    };
  };
  const spread = (key: string, group: Group, label: string, target: Target): Row => {
    const { script, afterRun } = rotating(key);
    const row = newRow(key, group, label, target, script, afterRun);
    row.warmRequests = many.secrets.length;
    return row;
  };
  const middle = many.secrets[Math.floor(many.secrets.length / 2)] as string;
  const singleSecret = single.secrets[0] as string;
  await assertLimited(single.target, singleSecret);
  await assertLimited(many.target, middle);
  setup.rows.push(
    newRow('tokens-1', 'tokens', 'tokens: 1 team, 1 token', single.target, fixed('tokens-1', singleSecret)),
    newRow('tokens-10k-one', 'tokens', 'tokens: 10,000 held, load on 1', many.target, fixed('tokens-10k-one', middle)),
    spread('tokens-10k', 'tokens', 'tokens: 10,000 held, load on all', many.target),
  );
  if (setup.redis === null) return;
  const [singleRedis, manyRedis] = await Promise.all([
    redisTwin(setup, 'tokens-1', 'tokens-1-redis', 'tokens: 1 team, 1 token, Redis'),
    redisTwin(setup, 'tokens-10k', 'tokens-10k-redis', 'tokens: 10,000 held, load on all, Redis'),
  ]);
  setup.rows.push(
    newRow('tokens-1-redis', 'tokens-redis', 'tokens: 1 team, 1 token, Redis', singleRedis, fixed('tokens-1-redis', singleSecret)),
    spread('tokens-10k-redis', 'tokens-redis', 'tokens: 10,000 held, load on all, Redis', manyRedis),
  );
}

/** Unless an answer carries the team's limit headers, the rows would not measure the limits. */
async function assertLimited(target: Target, secret: string): Promise<void> {
  const response = await request(`${target.origin}${CHAT_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
    body: chatBody(false),
  });
  await response.body.dump();
  if (response.statusCode !== 200 || response.headers[LIMITS_HEADER] === undefined) {
    throw new Error(`${target.label}: a token's request answered ${response.statusCode} without ${LIMITS_HEADER}: its team's limits are not in force`);
  }
}

async function measure(row: Row): Promise<{ load: WrkCount; cpu: number; stateCpu: number | undefined }> {
  const script = row.script();
  const stateBefore = await row.target.stateCpuSeconds?.();
  const cpuBefore = cpuSeconds(row.target.pid);
  const load = await wrkScript(row.target.origin, script, CONNECTIONS, seconds);
  const cpu = cpuSeconds(row.target.pid) - cpuBefore;
  const stateAfter = await row.target.stateCpuSeconds?.();
  row.afterRun(load.requests);
  return { load, cpu, stateCpu: stateBefore === undefined || stateAfter === undefined ? undefined : stateAfter - stateBefore };
}

/** Adds a run to the row's samples; returns its CPU µs per request (gateway and state store). */
function record(row: Row, { load, cpu, stateCpu }: Awaited<ReturnType<typeof measure>>): number {
  const gateway = (cpu * 1_000_000) / load.requests;
  const state = stateCpu === undefined ? 0 : (stateCpu * 1_000_000) / load.requests;
  row.rps.push(load.requestsPerSecond);
  row.cpu.push(gateway);
  if (stateCpu !== undefined) row.stateCpu.push(state);
  row.failures += load.failures;
  return gateway + state;
}

async function warmUp(row: Row, notes: string[]): Promise<void> {
  let sent = 0;
  while (sent < row.warmRequests) sent += (await wrkWarm(row, warmUpPlan.seconds)).requests;
  let previous = (await wrkWarm(row, warmUpPlan.seconds)).requestsPerSecond;
  for (let slice = 1; slice <= warmUpPlan.maxSlices; slice++) {
    const next = (await wrkWarm(row, STEADY_SLICE_SECONDS)).requestsPerSecond;
    const change = Math.abs(next - previous) / previous;
    previous = next;
    if (change < STEADY_TOLERANCE) return;
  }
  notes.push(`${row.label}: throughput still changing by over 5 % after warm-up; measured anyway`);
}

async function wrkWarm(row: Row, duration: number): Promise<WrkCount> {
  const load = await wrkScript(row.target.origin, row.script(), CONNECTIONS, duration);
  row.afterRun(load.requests);
  return load;
}

/** Per round: (gateway + state store) CPU per request. */
function totalsByRound(row: Row): number[] {
  return row.cpu.map((value, index) => value + (row.stateCpu[index] ?? 0));
}

function ratiosByRound(numerator: Row, denominator: Row | number[]): number[] {
  const over = Array.isArray(denominator) ? denominator : totalsByRound(denominator);
  return totalsByRound(numerator).map((value, index) => value / (over[index] as number));
}

function render(setup: Setup, floor: Row): string {
  const references = new Map<string, Row>();
  for (const row of setup.rows) if (row.group !== 'floor' && !references.has(row.group)) references.set(row.group, row);
  const fixed = (value: number, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : '–');
  const lines = [
    `# Scale bench, ${new Date().toISOString()}`,
    '',
    `${rounds} rounds of ${seconds} s per row, wrk ${CONNECTIONS} connections on core ${LOAD_CORE}, servers on the other core. In each round every group (pool memory, pool Redis, tokens memory, tokens Redis) runs right after a floor run of its own, in the opposite order every other round; ÷ floor is a row's (gateway + Redis) CPU per request over that floor run's, ÷ 1 credential / 1 token over its group's first row's in the same round; medians over rounds.`,
    '',
    '| scenario | gateway CPU µs/req | Redis CPU µs/req | ÷ floor | ÷ 1 credential / 1 token | RPS | failures |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const row of setup.rows) {
    const reference = row.group === 'floor' ? undefined : references.get(row.group);
    lines.push(
      `| ${row.label} | ${fixed(median(row.cpu))} | ${row.stateCpu.length === 0 ? '' : fixed(median(row.stateCpu))} | ${row === floor ? '1' : `${fixed(median(ratiosByRound(row, row.floorCpu)), 2)}×`} | ${reference === undefined ? '' : `${fixed(median(ratiosByRound(row, reference)), 2)}×`} | ${fixed(median(row.rps))} | ${row.failures} |`,
    );
  }
  lines.push('', 'Round by round (gateway + Redis µs per request):', '');
  for (const row of setup.rows)
    lines.push(
      `- ${row.label}: ${totalsByRound(row)
        .map((value) => fixed(value))
        .join(', ')}`,
    );
  lines.push(
    '',
    `Pool rows: every model route is a credential of its own (\`upstreams[]\` entry) on the same fake upstream, weight 1, strategy \`weighted\`; every other request carries \`X-Session-Id\` from ${LIVE_SESSIONS.toLocaleString('en-US')} live sessions (one in ${NEW_SESSION_EVERY} session requests opens a new one), the others none (their session is inferred).`,
    `Token rows: the plain chat config; every team has limits (${Object.entries(TEAM_LIMITS)
      .map(([name, value]) => `${name} ${value.toLocaleString('en-US')}`)
      .join(
        ', ',
      )}: never reached), its tokens none of their own; "load on all" sends each request with the next of the 10,000 tokens (round robin), "load on 1" all with one of them (same process as "load on all").`,
    ...(setup.redis === null ? [] : [describeRedis(setup.redis)]),
    ...setup.notes.map((note) => `- ${note}`),
  );
  return lines.join('\n');
}

async function main(): Promise<void> {
  execFileSync('taskset', ['-cp', LOAD_CORE, String(process.pid)], { stdio: 'ignore' });
  const workDirectory = mkdtempSync(join(tmpdir(), 'switchyard-scale-'));
  const upstream = await spawnPinned('node', [join(root, 'dist-bench', 'fast-upstream.js'), '0']);
  const context: BenchContext = {
    root,
    workDirectory,
    upstreamOrigin: `http://127.0.0.1:${String(upstream.first['port'])}`,
    upstreamPid: upstream.child.pid as number,
  };
  const setup: Setup = { context, redis: null, targets: [], rows: [], notes: [] };
  let stopping: Promise<void> | null = null;
  const stopAll = (): Promise<void> =>
    (stopping ??= (async () => {
      await Promise.all(setup.targets.map((target) => target.stop()));
      // After the gateways are gone, so that none writes its counts back.
      if (setup.redis !== null) say(await removeBenchKeys(setup.redis, 'scale bench'));
      upstream.child.kill('SIGTERM');
      rmSync(workDirectory, { recursive: true, force: true });
    })());
  const onSignal = (signal: NodeJS.Signals) => {
    say(`${signal}: stopping what the bench started`);
    void stopAll().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    if (withRedis) {
      const connected = await connectBenchRedis('switchyard-bench-scale');
      if (connected.redis === null) throw new Error(`--redis: ${connected.skipped}`);
      setup.redis = connected.redis;
    }
    const bare = await startBareProxy(context);
    setup.targets.push(bare);
    const floorScript = join(workDirectory, 'bare.lua');
    fixedHeadersScript(floorScript, bare.headers);
    const floor = newRow('bare', 'floor', 'floor (bare undici proxy)', bare, () => floorScript);
    setup.rows.push(floor);
    say('starting the gateways');
    if (only !== 'tokens') {
      await addPoolRows(setup, null);
      if (setup.redis !== null) await addPoolRows(setup, setup.redis);
    }
    if (only !== 'pool') {
      say(`making ${TEAMS} teams and ${TEAMS * TOKENS_PER_TEAM} tokens`);
      await addTokenRows(setup);
    }
    const unknown = profiled.filter((key) => !setup.rows.some((row) => row.key === key));
    if (unknown.length > 0) throw new Error(`--profile ${unknown.join(',')}: no such row (${setup.rows.map((row) => row.key).join(', ')})`);
    for (const row of setup.rows) {
      say(`warming up ${row.label}`);
      await warmUp(row, setup.notes);
    }
    const groups = [...new Set(setup.rows.flatMap((row) => (row.group === 'floor' ? [] : [row.group])))];
    for (let round = 1; round <= rounds; round++) {
      say(`round ${round}/${rounds}`);
      // The host's speed drifts within a round: each group is measured right after a floor run of
      // its own, and every other round in the opposite order, so that a row and what it is
      // divided by are measured seconds apart and the drift does not favour the first rows.
      const backwards = round % 2 === 0;
      for (const group of backwards ? [...groups].reverse() : groups) {
        const floorCpu = record(floor, await measure(floor));
        const rows = setup.rows.filter((row) => row.group === group);
        for (const row of backwards ? rows.reverse() : rows) {
          record(row, await measure(row));
          row.floorCpu.push(floorCpu);
        }
      }
    }
    const markdown = render(setup, floor);
    process.stdout.write(`${markdown}\n`);
    mkdirSync(join(root, 'bench', 'results'), { recursive: true });
    writeFileSync(join(root, 'bench', 'results', quick ? 'latest-scale-quick.md' : 'latest-scale.md'), `${markdown}\n`);
  } finally {
    await stopAll();
    if (profiled.length > 0) say(`CPU profiles of ${profiled.join(', ')} in ${profileDirectory}/<row>/`);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`scale bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});

function argumentValue(flag: string): string | undefined {
  const index = argv.indexOf(flag);
  return index === -1 ? undefined : argv[index + 1];
}
