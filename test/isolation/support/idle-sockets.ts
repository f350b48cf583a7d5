import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { expect, vi } from 'vitest';
import { stringify } from 'yaml';
import { runCli } from '../../../src/cli/main.js';
import { startFaultUpstream, type FaultUpstream } from '../../fake-upstreams/fault-upstream.js';

const BIN = fileURLToPath(new URL('../../../bin/switchyard.js', import.meta.url));
/** The bystander runs in a process of its own (bystander-process.ts says why). */
const BYSTANDER = fileURLToPath(new URL('./bystander-process.ts', import.meta.url));
/** Where the bystander's requests come from; the attackers use other loopback addresses. */
export const BYSTANDER_ADDRESS = '127.0.0.1';

/** This process's limit on open descriptors (`ulimit -n`), from /proc; 0 where there is none to read. */
export function openFileLimit(): number {
  try {
    const line = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return line === null ? 0 : Number(line[1]);
  } catch {
    return 0;
  }
}

/** `switchyard serve` as a process of its own (its own descriptors), in front of the fault upstream's `ok` model. */
export interface GatewayProcess {
  readonly url: string;
  readonly port: number;
  readonly token: string;
  /** Descriptors the gateway process holds open: its sockets, among others. */
  openDescriptors(): number;
  stop(): Promise<void>;
}

export async function startGatewayProcess(server: Record<string, unknown>): Promise<GatewayProcess> {
  const upstream: FaultUpstream = await startFaultUpstream();
  const directory = mkdtempSync(join(tmpdir(), 'switchyard-idle-sockets-'));
  const configPath = join(directory, 'switchyard.yaml');
  writeFileSync(
    configPath,
    stringify({
      server: { host: '127.0.0.1', port: 0, ...server },
      database: { url: `sqlite:${join(directory, 'switchyard.db')}` },
      logging: { level: 'warn', access: false },
      upstreams: [{ id: 'fault', provider: 'openai', base_url: `${upstream.url}/v1`, api_key: 'sk-fault' }],
      models: [{ id: 'ok', type: 'chat', routes: [{ upstream: 'fault', model: 'ok' }] }],
    }),
  );
  const created: string[] = [];
  if (
    (await runCli(['tokens', 'create', '--team', 'bystander', '--config', configPath], { stdout: (line) => created.push(line), stderr: () => undefined })) !== 0
  ) {
    throw new Error('could not create the bystander token');
  }
  const child: ChildProcess = spawn(process.execPath, [BIN, 'serve', '--config', configPath], { stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    await upstream.close();
    rmSync(directory, { recursive: true, force: true });
  };
  try {
    // The banner (stderr) names the address; the JSON log lines are kept to `warn` and above.
    const url = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stderr as NodeJS.ReadableStream }).on('line', (line) => {
        const match = /listening on (http:\/\/\S+)/i.exec(line);
        if (match !== null) resolve(match[1] as string);
      });
      child.once('exit', (code) => reject(new Error(`switchyard serve exited with ${code} before listening`)));
    });
    return {
      url,
      port: Number(new URL(url).port),
      token: created.at(-1) as string,
      openDescriptors: () => readdirSync(`/proc/${child.pid}/fd`).length,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** One idle socket of the attack, as its client saw it. */
export interface IdleSocket {
  readonly socket: Socket;
  /** When the connection was established (ms, `performance.now()`); null: it never was. */
  openedAt: number | null;
  /** When the gateway's FIN or reset reached the client, or the socket failed; null: still open. */
  closedAt: number | null;
  /** What the gateway wrote before closing (a 408, or nothing). */
  received: string;
}

/**
 * Opens an idle socket from `localAddress`: it sends nothing, or, when `partialHead`, the start of
 * a request head that never ends (slowloris). It never closes its side (`allowHalfOpen`), as a
 * client that neither reads nor closes: only the gateway can free the slot.
 */
export function openIdleSocket(port: number, localAddress: string, partialHead: boolean): Promise<IdleSocket> {
  const socket = connect({ host: '127.0.0.1', port, localAddress, allowHalfOpen: true });
  const idle: IdleSocket = { socket, openedAt: null, closedAt: null, received: '' };
  const closed = (): void => {
    idle.closedAt ??= performance.now();
  };
  socket.on('data', (chunk: Buffer) => (idle.received += chunk.toString('latin1')));
  socket.on('end', closed);
  socket.on('close', closed);
  socket.on('error', closed);
  return new Promise((resolve) => {
    socket.once('connect', () => {
      idle.openedAt = performance.now();
      if (partialHead) socket.write('GET /health HTTP/1.1\r\nhost: gateway\r\nx-slow: ');
      resolve(idle);
    });
    socket.once('error', () => resolve(idle));
  });
}

/** Opens `count` idle sockets, spread over `addresses` in turn, `concurrency` connects at a time; every fourth sends a partial head. */
export async function openIdleSockets(port: number, count: number, addresses: readonly string[], concurrency = 400): Promise<IdleSocket[]> {
  const sockets: IdleSocket[] = [];
  for (let start = 0; start < count; start += concurrency) {
    const wave: Array<Promise<IdleSocket>> = [];
    for (let index = start; index < Math.min(count, start + concurrency); index++) {
      wave.push(openIdleSocket(port, addresses[index % addresses.length] as string, index % 4 === 3));
    }
    sockets.push(...(await Promise.all(wave)));
  }
  return sockets;
}

/** The longest an idle socket stayed open, from its connect to the gateway's FIN (ms); Infinity while one is still open. */
export function longestOpen(sockets: readonly IdleSocket[]): number {
  let longest = 0;
  for (const idle of sockets) {
    if (idle.openedAt === null) continue;
    if (idle.closedAt === null) return Number.POSITIVE_INFINITY;
    longest = Math.max(longest, idle.closedAt - idle.openedAt);
  }
  return longest;
}

/** What the bystander saw: one entry per `/health` and per chat request, in order. */
export interface BystanderOutcome {
  path: string;
  /** The status, or the error's code when there was no answer. */
  result: number | string;
}

/**
 * Polls `/health` and a real authenticated chat completion, each on a new connection from
 * `BYSTANDER_ADDRESS` (a kept-alive one would not show whether new connections are taken), every
 * `everyMs` until `stop` is called, from a process of its own (bystander-process.ts says why).
 */
export function pollBystander(gateway: GatewayProcess, everyMs = 100): { stop(): Promise<BystanderOutcome[]> } {
  const child = spawn(
    process.execPath,
    ['--disable-warning=ExperimentalWarning', BYSTANDER, String(gateway.port), gateway.token, BYSTANDER_ADDRESS, String(everyMs)],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const outcomes: BystanderOutcome[] = [];
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => outcomes.push(JSON.parse(line) as BystanderOutcome));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return {
    stop: async () => {
      child.stdin?.end();
      const code = await exited;
      if (code !== 0) throw new Error(`the bystander process exited with ${code}`);
      return outcomes;
    },
  };
}

/**
 * Whether every socket the attack opened is closed within `timeoutMs`: answered, not thrown, so the
 * suite can measure what the bystanders saw before it asserts this.
 */
export function closedWithin(sockets: readonly IdleSocket[], timeoutMs: number): Promise<boolean> {
  return vi
    .waitFor(() => expect(sockets.every((idle) => idle.openedAt === null || idle.closedAt !== null)).toBe(true), { timeout: timeoutMs, interval: 50 })
    .then(
      () => true,
      () => false,
    );
}

/**
 * An attacker that keeps `perAddress` idle sockets open from each of `addresses`: a socket the
 * gateway closes is replaced after `reconnectDelayMs`, until `stop`. Every socket it opened is in
 * `sockets`.
 */
export function keepIdleSockets(
  port: number,
  perAddress: number,
  addresses: readonly string[],
  reconnectDelayMs: number,
): { sockets: IdleSocket[]; opened: Promise<void>; stop(): void } {
  const sockets: IdleSocket[] = [];
  let running = true;
  const keep = async (address: string, partialHead: boolean): Promise<void> => {
    const idle = await openIdleSocket(port, address, partialHead);
    sockets.push(idle);
    let replaced = false;
    const replace = (): void => {
      if (replaced || !running) return;
      replaced = true;
      setTimeout(() => void keep(address, partialHead), reconnectDelayMs);
    };
    if (idle.closedAt !== null) replace();
    else idle.socket.once('close', replace).once('end', replace);
  };
  const first: Array<Promise<void>> = [];
  for (const address of addresses) for (let index = 0; index < perAddress; index++) first.push(keep(address, index % 4 === 3));
  return {
    sockets,
    opened: Promise.all(first).then(() => undefined),
    stop: () => {
      running = false;
    },
  };
}
