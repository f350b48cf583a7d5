import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

/**
 * The redis-server binary the isolation suites start their own instances with, from
 * TEST_REDIS_SERVER (`.ci/run` sets it). Suites that need one are skipped without it, like the
 * suites that need the machine's shared Redis.
 */
export const redisServerBinary: string | undefined = process.env.TEST_REDIS_SERVER || undefined;

/** A free TCP port on 127.0.0.1 (taken and released at once: a port nobody was listening on). */
export async function sparePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/**
 * A redis-server of the suite's own on a spare port, never the machine's shared one, so that a suite
 * may stop, restart or pause it. No persistence: every start is empty unless `restart` keeps the
 * process's memory (it does not; use `pause`/`resume` to freeze it instead).
 */
export class PrivateRedis {
  private process: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    private readonly directory: string,
    private readonly binary: string,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(binary: string = requireBinary()): Promise<PrivateRedis> {
    const directory = await mkdtemp(join(tmpdir(), 'switchyard-redis-'));
    const redis = new PrivateRedis(await sparePort(), directory, binary);
    await redis.launch();
    return redis;
  }

  /** Starts the server again on the same port after {@link stop}. */
  async launch(): Promise<void> {
    const child = spawn(this.binary, ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.directory], {
      stdio: 'ignore',
    });
    this.process = child;
    for (let tries = 0; tries < 100; tries++) {
      if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
      if (await this.answers()) return;
      await delay(50);
    }
    throw new Error('redis-server did not answer in 5 s');
  }

  /** Freezes the server (SIGSTOP): connections stay open and nothing is answered, as a hung host. */
  pause(): void {
    this.process?.kill('SIGSTOP');
  }

  resume(): void {
    this.process?.kill('SIGCONT');
  }

  /** Stops the server (SIGKILL: an outage, not a shutdown); its data is gone. */
  async stop(): Promise<void> {
    const child = this.process;
    this.process = undefined;
    if (child === undefined || child.exitCode !== null) return;
    child.kill('SIGCONT');
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  async close(): Promise<void> {
    await this.stop();
    await rm(this.directory, { recursive: true, force: true });
  }

  private async answers(): Promise<boolean> {
    const { connect } = await import('node:net');
    return new Promise((resolve) => {
      const socket = connect(this.port, '127.0.0.1');
      socket.setTimeout(500);
      socket.once('connect', () => socket.write('PING\r\n'));
      socket.once('data', (data) => {
        socket.destroy();
        resolve(data.toString().startsWith('+PONG'));
      });
      socket.once('error', () => resolve(false));
      socket.once('timeout', () => {
        socket.destroy();
        resolve(false);
      });
    });
  }
}

function requireBinary(): string {
  if (redisServerBinary === undefined) throw new Error('TEST_REDIS_SERVER is not set');
  return redisServerBinary;
}
