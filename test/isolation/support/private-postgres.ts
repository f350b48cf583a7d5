import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chown, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import { sparePort } from './private-redis.js';

const run = promisify(execFile);

/**
 * The folder of PostgreSQL's server binaries (initdb, postgres) the isolation suites start their own
 * cluster with, from TEST_POSTGRES_BIN (`.ci/run` sets it). Suites that need one are skipped without it.
 */
export const postgresBinaries: string | undefined = process.env.TEST_POSTGRES_BIN || undefined;

/** PostgreSQL refuses to run as root: as root the cluster is made and run as this user. */
const SERVICE_USER = 'postgres';

/**
 * A PostgreSQL cluster of the suite's own on a spare port, never the machine's shared one, so that a
 * suite may stop, restart, pause or kill it. Trust authentication, database `postgres`, fsync off
 * (its data is thrown away). `stop` and `launch` keep the data: an outage and a recovery.
 */
export class PrivatePostgres {
  private process: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    private readonly directory: string,
    private readonly binaries: string,
    private readonly user: { uid?: number; gid?: number },
  ) {}

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  static async start(binaries: string = requireBinaries()): Promise<PrivatePostgres> {
    const directory = await mkdtemp(join(tmpdir(), 'switchyard-postgres-'));
    const user: { uid?: number; gid?: number } = isRoot() ? await serviceUser() : {};
    if (user.uid !== undefined && user.gid !== undefined) await chown(directory, user.uid, user.gid);
    await run(join(binaries, 'initdb'), ['-D', join(directory, 'data'), '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8'], user);
    const postgres = new PrivatePostgres(await sparePort(), directory, binaries, user);
    await postgres.launch();
    return postgres;
  }

  /** Starts the server (again) on the same port with the same data. */
  async launch(): Promise<void> {
    const parameters = [
      '-D',
      join(this.directory, 'data'),
      '-p',
      String(this.port),
      '-k',
      this.directory,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'fsync=off',
      '-c',
      'full_page_writes=off',
    ];
    // Spawned as the service user itself (not through runuser), so the child is the postmaster
    // and signals reach it.
    const child = spawn(join(this.binaries, 'postgres'), parameters, { stdio: 'ignore', ...this.user });
    this.process = child;
    for (let tries = 0; tries < 200; tries++) {
      if (child.exitCode !== null) throw new Error(`postgres exited with ${child.exitCode}`);
      if (await this.ready()) return;
      await delay(100);
    }
    throw new Error('postgres did not accept connections in 20 s');
  }

  /** Freezes the server (SIGSTOP on the postmaster and its backends): connections hang. */
  async pause(): Promise<void> {
    await this.signalAll('STOP');
  }

  async resume(): Promise<void> {
    await this.signalAll('CONT');
  }

  /** Stops the server at once (immediate shutdown: no checkpoint, connections reset); data kept. */
  async stop(): Promise<void> {
    const child = this.process;
    this.process = undefined;
    if (child === undefined || child.exitCode !== null) return;
    await this.signalAll('CONT');
    const exited = new Promise((resolve) => child.once('exit', resolve));
    // SIGQUIT is PostgreSQL's immediate shutdown.
    child.kill('SIGQUIT');
    await Promise.race([exited, delay(10_000)]);
    if (child.exitCode === null) child.kill('SIGKILL');
  }

  async close(): Promise<void> {
    await this.stop();
    await rm(this.directory, { recursive: true, force: true });
  }

  private async ready(): Promise<boolean> {
    try {
      await run(join(this.binaries, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(this.port), '-q']);
      return true;
    } catch {
      return false;
    }
  }

  private async signalAll(signal: 'STOP' | 'CONT'): Promise<void> {
    // The postmaster (its pid heads postmaster.pid) and every backend it forked.
    const lock = await readFile(join(this.directory, 'data', 'postmaster.pid'), 'utf8').catch(() => '');
    const postmaster = lock.split('\n')[0]?.trim();
    if (!postmaster) return;
    const backends = await run('pgrep', ['-P', postmaster])
      .then((result) => result.stdout.split('\n').filter(Boolean))
      .catch(() => []);
    await run('kill', [`-${signal}`, postmaster, ...backends]).catch(() => undefined);
  }
}

function isRoot(): boolean {
  return userInfo().uid === 0;
}

async function serviceUser(): Promise<{ uid: number; gid: number }> {
  const { stdout } = await run('id', ['-u', SERVICE_USER]);
  const { stdout: group } = await run('id', ['-g', SERVICE_USER]);
  return { uid: Number(stdout.trim()), gid: Number(group.trim()) };
}

function requireBinaries(): string {
  if (postgresBinaries === undefined) throw new Error('TEST_POSTGRES_BIN is not set');
  return postgresBinaries;
}
