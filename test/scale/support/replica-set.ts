import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { stringify } from 'yaml';
import { sparePort } from '../../isolation/support/private-redis.js';
import { startNginx, type PrivateNginx } from '../../support/private-nginx.js';

const BIN = fileURLToPath(new URL('../../../bin/switchyard.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const DEPLOY_PAGE = fileURLToPath(new URL('../../../docs/deploy.md', import.meta.url));

/** One `switchyard serve` OS process of a replica set: its port, its log lines, and how to stop it. */
export class ReplicaProcess {
  /** Its JSON log lines (stdout), in order. */
  readonly lines: Array<Record<string, unknown>> = [];
  /** What it wrote to stderr (the banner), every start's. */
  stderr = '';
  private child: ChildProcess | null = null;
  private exited: Promise<number | null> = Promise.resolve(null);

  constructor(
    /** 1, 2, 3: its place in the nginx upstream block. */
    readonly number: number,
    readonly port: number,
    private readonly configPath: string,
    private readonly environment: Readonly<Record<string, string>> = {},
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Its access lines: one per `/v1` request it served. */
  accessLines(): Array<Record<string, unknown>> {
    return this.lines.filter((line) => line['msg'] === 'request');
  }

  /** Starts it and resolves once it listens; rejects with its last lines if it exits first. */
  async start(): Promise<void> {
    const child = spawn(process.execPath, [BIN, 'serve', '--config', this.configPath], {
      cwd: ROOT,
      env: { ...process.env, ...this.environment, SWITCHYARD_PORT: String(this.port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    child.stderr?.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString();
    });
    await new Promise<void>((resolve, reject) => {
      createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
        let entry: Record<string, unknown>;
        try {
          entry = JSON.parse(line) as Record<string, unknown>;
        } catch {
          return;
        }
        this.lines.push(entry);
        if (String(entry['msg']).startsWith('Switchyard listening on')) resolve();
      });
      void this.exited.then((code) => reject(new Error(`replica ${this.number} exited (${code}) before listening: ${this.stderr.slice(-2_000)}`)));
    });
  }

  /** Sends `signal` and resolves with its exit code once it is gone (SIGKILL after `killAfterMs`). */
  async stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM', killAfterMs = 15_000): Promise<number | null> {
    const child = this.child;
    if (child === null || !this.running) return this.exited;
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    const code = await this.exited;
    clearTimeout(timer);
    return code;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }
}

export interface ReplicaSet {
  readonly replicas: readonly ReplicaProcess[];
  /** nginx's address: where clients send requests. */
  readonly url: string;
  readonly nginx: PrivateNginx;
  readonly configPath: string;
  /** Reloads nginx with these replicas marked `down` (taken out of rotation), the others in. */
  markDown(replicas: ReadonlySet<ReplicaProcess>): Promise<void>;
  close(): Promise<void>;
}

/**
 * The load balancer's block of docs/deploy.md, run as written, with the replicas' addresses in
 * place of the page's and the suite's port in place of 80: the suite tests the configuration the
 * page tells operators to use.
 */
export function deployNginxBlock(listenPort: number, replicaPorts: readonly number[], down: ReadonlySet<number> = new Set()): string {
  const page = readFileSync(DEPLOY_PAGE, 'utf8');
  const block = /```nginx\n([\s\S]*?)```/.exec(page)?.[1];
  if (block === undefined) throw new Error('docs/deploy.md has no nginx block');
  const servers = /^( *)server 10\.0\.0\.11:8080(.*)$/m.exec(block);
  if (servers === null) throw new Error('the nginx block of docs/deploy.md no longer has "server 10.0.0.11:8080"');
  const [, indent, options] = servers;
  let config = block.replace(/^ *server 10\.0\.0\.1[0-9]:8080.*\n/gm, '');
  const ourServers = replicaPorts
    .map((port) => `${indent}server 127.0.0.1:${port}${down.has(port) ? (options as string).replace(/;$/, ' down;') : options}\n`)
    .join('');
  config = config.replace(/(upstream switchyard \{\n)/, `$1${ourServers}`);
  if (!config.includes('listen 80;')) throw new Error('the nginx block of docs/deploy.md no longer has "listen 80;"');
  return config.replace('listen 80;', `listen 127.0.0.1:${listenPort};`);
}

/**
 * `count` replicas of one config (each on a port of its own, `SWITCHYARD_PORT`) behind a private
 * nginx running docs/deploy.md's block. The config's `server.port` is overridden per replica.
 */
export async function startReplicaSet(
  directory: string,
  config: Record<string, unknown>,
  options: { count?: number; environment?: (number: number) => Readonly<Record<string, string>> } = {},
): Promise<ReplicaSet> {
  const configPath = join(directory, 'switchyard.yaml');
  writeFileSync(configPath, stringify(config));
  const ports: number[] = [];
  for (let index = 0; index < (options.count ?? 3); index++) ports.push(await sparePort());
  const replicas = ports.map((port, index) => new ReplicaProcess(index + 1, port, configPath, options.environment?.(index + 1) ?? {}));
  await Promise.all(replicas.map((replica) => replica.start()));
  const nginx = await startNginx((port) => deployNginxBlock(port, ports));
  return {
    replicas,
    url: `http://127.0.0.1:${nginx.port}`,
    nginx,
    configPath,
    markDown: (down) => nginx.reconfigure((port) => deployNginxBlock(port, ports, new Set([...down].map((replica) => replica.port)))),
    close: async () => {
      await nginx.close();
      await Promise.all(replicas.map((replica) => replica.stop('SIGTERM')));
    },
  };
}

/** `GET /ready`'s status on a connection of its own; 0 when there was no answer. */
export async function readiness(url: string): Promise<number> {
  try {
    const answer = await request(`${url}/ready`, { headers: { connection: 'close' }, reset: true, headersTimeout: 2_000, bodyTimeout: 2_000 });
    await answer.body.text();
    return answer.statusCode;
  } catch {
    return 0;
  }
}
