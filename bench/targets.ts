import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { SessionMix } from './session-mix.js';

export const SERVER_CORE = '1';
export const CHAT_PATH = '/v1/chat/completions';

/** The pool scenario's targets (bench/pool-scenario.ts) are Switchyard too, configured otherwise. */
export type PoolTargetName = 'pool' | 'pool-redis' | 'pool-no-infer' | 'baseline-pool';
/** So are the limits scenario's (bench/limits-scenario.ts): the plain chat config, a token with limits. */
export type LimitsTargetName = 'limits' | 'limits-redis';
/** And the every-feature scenario's (bench/features-scenario.ts): the pool, Redis state, sessions and every limit at once. */
export type FeaturesTargetName = 'features';
/** The feature ladder's plain chat without the access log, then without session inference too (bench/breakdown.ts). */
export type BreakdownTargetName = 'plain-no-access' | 'plain-no-access-no-infer';
export type TargetName =
  | 'direct'
  | 'nginx'
  | 'bare'
  | 'switchyard'
  | 'baseline'
  | 'portkey'
  | 'native'
  | 'messages'
  | PoolTargetName
  | LimitsTargetName
  | FeaturesTargetName
  | BreakdownTargetName;

/** Which Switchyard build a target runs: this checkout's, or another built checkout (`--baseline DIR`). */
export interface SwitchyardBuild {
  root: string;
  name: 'switchyard' | 'baseline';
  label: string;
}

export interface Target {
  name: TargetName;
  label: string;
  origin: string;
  headers: Record<string, string>;
  /** Whose CPU and memory count as this target's (for `direct`, the upstream itself). */
  pid: number;
  stop(): Promise<void>;
  /** The model of the slow stream for the memory test; the fake upstream's own name when unset. */
  slowModel?: string;
  /** Session ids to send (the pool scenario); none when unset. */
  sessions?: SessionMix;
  /** CPU seconds, so far, of a process the target's requests use besides its own (the pool's Redis). */
  stateCpuSeconds?: () => Promise<number>;
  /** Commands that process has handled so far, from every client (Redis's INFO stats). */
  stateCommands?: () => Promise<number>;
  /** State operations the gateway has gone on without so far (timed out, or refused by its breaker: `/health`'s `shared_state`). */
  stateSkipped?: () => Promise<number>;
}

export interface BenchContext {
  root: string;
  workDirectory: string;
  upstreamOrigin: string;
  upstreamPid: number;
}

/** Starts a command pinned to the server core (or `core`); resolves with the first JSON object it prints on stdout (that `waitFor` accepts). */
export function spawnPinned(
  command: string,
  args: string[],
  options: { cwd?: string; waitForJson?: boolean; waitFor?: (line: Record<string, unknown>) => boolean; core?: string } = {},
): Promise<{ child: ChildProcess; first: Record<string, unknown> }> {
  const child = spawn('taskset', ['-c', options.core ?? SERVER_CORE, command, ...args], { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const errors: string[] = [];
  child.stderr?.on('data', (part: Buffer) => errors.push(part.toString()));
  if (options.waitForJson === false) return Promise.resolve({ child, first: {} });
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.on('line', (line) => {
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return; // Not JSON: a banner line.
      }
      if (options.waitFor !== undefined && !options.waitFor(parsed)) return;
      // From now on the output is drained unread: parsing a server's access lines would load the
      // load generator's core.
      lines.close();
      child.stdout?.resume();
      resolve({ child, first: parsed });
    });
    child.once('exit', (code) => reject(new Error(`${command} ${args.join(' ')} exited with ${code}: ${errors.join('').slice(-500)}`)));
  });
}

/**
 * `node args` pinned like every server; with a `wrapper`, that command instead of `node`: it names
 * node itself, with its flags (`valgrind … node --single-threaded`).
 */
function spawnWrapped(wrapper: readonly string[], args: string[], options: Parameters<typeof spawnPinned>[2] = {}): ReturnType<typeof spawnPinned> {
  const [command, ...wrapperArguments] = wrapper;
  return command === undefined ? spawnPinned('node', args, options) : spawnPinned(command, [...wrapperArguments, ...args], options);
}

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

async function waitForPort(port: number, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      }).on('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`nothing listens on port ${port} after ${timeoutMs} ms`);
}

function stopper(child: ChildProcess): () => Promise<void> {
  return () =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
    });
}

/** The pid of the process `taskset` became (it execs, so it is the child's own pid). */
function pidOf(child: ChildProcess): number {
  return child.pid as number;
}

export function direct(context: BenchContext): Target {
  return {
    name: 'direct',
    label: 'direct',
    origin: context.upstreamOrigin,
    headers: { authorization: 'Bearer sk-bench' },
    pid: context.upstreamPid,
    stop: async () => undefined,
  };
}

export async function startNginx(context: BenchContext): Promise<Target> {
  const port = await freePort();
  const prefix = join(context.workDirectory, 'nginx');
  mkdirSync(join(prefix, 'logs'), { recursive: true });
  const upstream = new URL(context.upstreamOrigin);
  writeFileSync(
    join(prefix, 'nginx.conf'),
    `user root;
worker_processes 1;
pid ${prefix}/nginx.pid;
error_log ${prefix}/logs/error.log warn;
events { worker_connections 8192; }
http {
  access_log off;
  client_body_temp_path ${prefix}/body; proxy_temp_path ${prefix}/proxy;
  fastcgi_temp_path ${prefix}/fastcgi; uwsgi_temp_path ${prefix}/uwsgi; scgi_temp_path ${prefix}/scgi;
  upstream fast { server ${upstream.hostname}:${upstream.port}; keepalive 256; }
  server {
    listen 127.0.0.1:${port};
    keepalive_requests 1000000;
    location / {
      proxy_pass http://fast;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
    }
  }
}
`,
  );
  const { child } = await spawnPinned('nginx', ['-p', prefix, '-c', join(prefix, 'nginx.conf'), '-g', 'daemon off;'], { waitForJson: false });
  await waitForPort(port);
  return {
    name: 'nginx',
    label: 'nginx (1 worker)',
    origin: `http://127.0.0.1:${port}`,
    headers: { authorization: 'Bearer sk-bench' },
    pid: pidOf(child),
    stop: stopper(child),
  };
}

/** `wrapper`: the command that runs node, with node (`valgrind … node …`: bench/instructions.ts); plain `node` by default. */
/** The bare undici proxy; `workers` above 1 runs that many processes on one port (node:cluster). */
export async function startBareProxy(context: BenchContext, wrapper: readonly string[] = [], workers = 1): Promise<Target> {
  const { child, first } = await spawnWrapped(wrapper, [join(context.root, 'dist-bench', 'bare-proxy.js'), '0', context.upstreamOrigin, String(workers)]);
  return {
    name: 'bare',
    label: 'bare undici proxy',
    origin: `http://127.0.0.1:${String(first['port'])}`,
    headers: { authorization: 'Bearer sk-bench' },
    pid: pidOf(child),
    stop: stopper(child),
  };
}

/** Switchyard as users run it: token auth, request log in SQLite, a two-route pool. */
export function startSwitchyard(
  context: BenchContext,
  build: SwitchyardBuild = { root: context.root, name: 'switchyard', label: 'Switchyard' },
): Promise<Target> {
  return launchSwitchyard(
    context,
    { root: build.root, name: build.name, label: build.label },
    plainChatConfig(context, join(context.workDirectory, build.name)),
  );
}

/**
 * The plain chat scenario's config, in `directory`: a model over two routes to the fake upstream,
 * and the memory test's slow model. The limits scenario adds `topLevel` lines (its `state`) and
 * `modelLines` to both models (a price), and nothing else, so that the limits are all it measures;
 * the feature ladder turns the access log off (`accessLog: false`) and adds `routing` lines.
 */
export function plainChatConfig(
  context: BenchContext,
  directory: string,
  extra: { topLevel?: readonly string[]; modelLines?: readonly string[]; accessLog?: boolean } = {},
): string {
  return [
    'server: { host: 127.0.0.1, port: 0 }',
    `database: { url: "sqlite:${join(directory, 'switchyard.db')}" }`,
    `logging: { level: info${extra.accessLog === false ? ', access: false' : ''} }`,
    ...(extra.topLevel ?? []),
    'upstreams:',
    `  - { id: fast-a, provider: openai, base_url: "${context.upstreamOrigin}/v1", api_key: sk-bench-a }`,
    `  - { id: fast-b, provider: openai, base_url: "${context.upstreamOrigin}/v1", api_key: sk-bench-b }`,
    'models:',
    '  - id: bench-model',
    '    type: chat',
    ...(extra.modelLines ?? []),
    '    routes:',
    '      - { upstream: fast-a, model: gpt-4o-mini, weight: 1 }',
    '      - { upstream: fast-b, model: gpt-4o-mini, weight: 1 }',
    '  - id: bench-model-slow',
    '    type: chat',
    ...(extra.modelLines ?? []),
    '    routes:',
    '      - { upstream: fast-a, model: slow-stream }',
    '',
  ].join('\n');
}

/**
 * Plain chat on Redis state as `serve --workers N` runs it (bench/workers-bench.ts,
 * bench/instructions.ts), in `directory`; `database` replaces its SQLite request log when given.
 */
export function workersConfig(
  context: BenchContext,
  directory: string,
  options: { redisUrl: string; keyPrefix: string; workers: number; database?: string | undefined },
): string {
  return plainChatConfig(context, directory, {
    topLevel: [
      `state: { url: "${options.redisUrl}", key_prefix: "${options.keyPrefix}" }`,
      `server: { host: 127.0.0.1, port: 0, workers: ${options.workers} }`,
    ],
  })
    .replace('server: { host: 127.0.0.1, port: 0 }\n', '')
    .replace(/^database: .*$/m, (line) => (options.database === undefined ? line : `database: { url: "${options.database}" }`));
}

/** What each rung of the feature ladder below plain chat turns off (bench/breakdown.ts, bench/instructions.ts). */
const LADDER_RUNGS: Record<BreakdownTargetName, readonly string[]> = {
  'plain-no-access': [],
  'plain-no-access-no-infer': ['routing: { infer_sessions: false }'],
};

/** Plain chat without the access log, and for `plain-no-access-no-infer` without session inference too; `wrapper` as `launchSwitchyard`'s. */
export function startLadderRung(context: BenchContext, name: BreakdownTargetName, label: string, wrapper: readonly string[] = []): Promise<Target> {
  const config = plainChatConfig(context, join(context.workDirectory, name), { accessLog: false, topLevel: LADDER_RUNGS[name] });
  return launchSwitchyard(context, { root: context.root, name, label }, config, [], undefined, wrapper);
}

/**
 * How the bench's token is made: `switchyard` CLI commands run first (the limits scenario's team
 * and project), then `tokens create` with `tokenArguments`.
 */
export interface TokenSetup {
  before: ReadonlyArray<readonly string[]>;
  tokenArguments: readonly string[];
}

/** A token of team `bench` (`tokens create --team` makes the team), as every target but the limits scenario's has. */
const PLAIN_TOKEN: TokenSetup = { before: [], tokenArguments: ['--team', 'bench'] };

/**
 * A Switchyard process of `build.root` with the given config, in `workDirectory/<name>` (where the
 * config's SQLite file is expected): a token (`access`), then `serve`. Rejects when the build
 * refuses the config (e.g. a baseline whose schema lacks a key), so callers can fall back.
 */
export async function launchSwitchyard(
  context: BenchContext,
  build: { root: string; name: TargetName; label: string },
  config: string,
  nodeArguments: readonly string[] = [],
  access: TokenSetup = PLAIN_TOKEN,
  /** The command that runs node, with node (`valgrind … node …`: bench/instructions.ts); plain `node` by default. */
  wrapper: readonly string[] = [],
): Promise<Target> {
  const directory = join(context.workDirectory, build.name);
  mkdirSync(directory, { recursive: true });
  const configPath = join(directory, 'switchyard.yaml');
  writeFileSync(configPath, config);
  const bin = join(build.root, 'bin', 'switchyard.js');
  // stderr is kept (not printed) so that a refused config's message is in the error thrown.
  const cli = (args: readonly string[]) =>
    execFileSync('node', [bin, ...args, '--config', configPath], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  for (const command of access.before) cli(command);
  const token = cli(['tokens', 'create', ...access.tokenArguments])
    .trim()
    .split('\n')
    .at(-1) as string;
  // Its first JSON line on stdout is not always the one with the URL (a log line may come first): wait for that one.
  const { child, first } = await spawnWrapped(wrapper, [...nodeArguments, bin, 'serve', '--config', configPath], {
    waitFor: (line) => line['url'] !== undefined,
  });
  const url = first['url'];
  return {
    name: build.name,
    label: build.label,
    origin: String(url),
    headers: { authorization: `Bearer ${token}` },
    pid: pidOf(child),
    stop: stopper(child),
    slowModel: 'bench-model-slow',
  };
}

export function portkeyEntry(root: string): string | null {
  const entry = join(root, 'bench', '.vendor', 'node_modules', '@portkey-ai', 'gateway', 'build', 'start-server.js');
  return existsSync(entry) ? entry : null;
}

export async function startPortkey(context: BenchContext, entry: string): Promise<Target> {
  const port = await freePort();
  const { child } = await spawnPinned('node', [entry, `--port=${port}`, '--headless'], { waitForJson: false });
  await waitForPort(port, 30_000);
  return {
    name: 'portkey',
    label: 'Portkey gateway',
    origin: `http://127.0.0.1:${port}`,
    headers: { authorization: 'Bearer sk-bench', 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `${context.upstreamOrigin}/v1` },
    pid: pidOf(child),
    stop: stopper(child),
  };
}
