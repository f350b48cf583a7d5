import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { stringify } from 'yaml';
import { runCli } from '../../src/cli/main.js';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../fake-upstreams/openai-upstream.js';

/** `logging.file`, moved away under load and reopened on a signal (docs/operations.md, Logs): no line lost, none twice. */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, 'bin', 'switchyard.js');
const LOGROTATE = process.env['TEST_LOGROTATE'];

let upstream: FakeOpenAIUpstream;
beforeAll(async () => {
  upstream = await startFakeOpenAIUpstream();
});
afterAll(async () => {
  await upstream.close();
});

interface Served {
  readonly directory: string;
  readonly logFile: string;
  readonly pidFile: string;
  readonly stdout: string[];
  /** Requests sent by four callers at once until `stop`; resolves with the request id of each answer. */
  load(): { stop(): Promise<string[]>; count(): number };
  /** SIGTERM, then waits for exit 0. */
  stop(): Promise<void>;
}

async function serve(): Promise<Served> {
  const directory = mkdtempSync(join(tmpdir(), 'switchyard-log-file-'));
  onTestFinished(() => rmSync(directory, { recursive: true, force: true }));
  const configPath = join(directory, 'switchyard.yaml');
  writeFileSync(
    configPath,
    stringify({
      server: { host: '127.0.0.1', port: 0, pid_file: 'switchyard.pid' },
      database: { url: `sqlite:${join(directory, 'switchyard.db')}` },
      // Relative to the config file; the folder is made when missing.
      logging: { file: 'log/switchyard.log' },
      upstreams: [{ id: 'openai', provider: 'openai', base_url: upstream.url, api_key: 'sk-test' }],
      models: [{ id: 'gpt-4o-mini', type: 'chat', routes: [{ upstream: 'openai', model: 'gpt-4o-mini' }] }],
    }),
  );
  const created: string[] = [];
  expect(await runCli(['tokens', 'create', '--team', 'ops', '--config', configPath], { stdout: (line) => created.push(line), stderr: () => undefined })).toBe(
    0,
  );
  const token = created.at(-1) as string;
  const logFile = join(directory, 'log', 'switchyard.log');
  const pidFile = join(directory, 'switchyard.pid');
  const child = spawn(process.execPath, [BIN, 'serve', '--config', configPath], { stdio: ['ignore', 'pipe', 'ignore'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const stdout: string[] = [];
  child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk.toString()));
  let url: string | undefined;
  for (let attempt = 0; attempt < 200 && url === undefined; attempt++) {
    await sleep(50);
    if (child.exitCode !== null) throw new Error(`switchyard serve exited with ${child.exitCode}`);
    if (!existsSync(pidFile) || !existsSync(logFile)) continue;
    url = logLines(logFile).find((line) => typeof line['url'] === 'string')?.['url'] as string | undefined;
  }
  if (url === undefined) throw new Error('switchyard serve did not say where it listens');
  expect(readFileSync(pidFile, 'utf8').trim()).toBe(String(child.pid));
  const listening = url;
  return {
    directory,
    logFile,
    pidFile,
    stdout,
    load: () => {
      let running = true;
      const ids: string[] = [];
      const caller = async (): Promise<void> => {
        while (running) {
          const response = await request(`${listening}/v1/chat/completions`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }),
          });
          await response.body.text();
          expect(response.statusCode).toBe(200);
          ids.push(String(response.headers['x-request-id']));
        }
      };
      const callers = Promise.all([caller(), caller(), caller(), caller()]);
      return {
        count: () => ids.length,
        stop: async () => {
          running = false;
          await callers;
          return ids;
        },
      };
    },
    stop: async () => {
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    },
  };
}

function logLines(path: string): Array<Record<string, unknown>> {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function untilServed(load: { count(): number }, atLeast: number): Promise<void> {
  while (load.count() < atLeast) await sleep(20);
}

/** Every request id answered appears in exactly one access line across the files, and each file has some. */
function expectEveryLineOnce(ids: readonly string[], files: readonly string[]): void {
  const perFile = files.map((file) =>
    logLines(file).flatMap((line) => (line['msg'] === 'request' && typeof line['requestId'] === 'string' ? [line['requestId']] : [])),
  );
  for (const logged of perFile) expect(logged.length).toBeGreaterThan(0);
  const logged = perFile.flat();
  expect(new Set(ids).size).toBe(ids.length);
  expect(logged.length).toBe(ids.length);
  expect(new Set(logged)).toEqual(new Set(ids));
}

describe('logging.file', () => {
  it('moved away under load, then SIGUSR2: every request is logged exactly once across the old file and the new one; stdout has no log lines', async () => {
    const served = await serve();
    const load = served.load();
    await untilServed(load, 100);
    const rotated = `${served.logFile}.1`;
    renameSync(served.logFile, rotated);
    // Until the signal the gateway goes on writing to the moved file, as logrotate's window is.
    await untilServed(load, load.count() + 50);
    process.kill(Number(readFileSync(served.pidFile, 'utf8')), 'SIGUSR2');
    await untilServed(load, load.count() + 100);
    const ids = await load.stop();
    await served.stop();
    expectEveryLineOnce(ids, [rotated, served.logFile]);
    expect(logLines(served.logFile).some((line) => line['msg'] === 'SIGUSR2: log file reopened')).toBe(true);
    expect(logLines(served.logFile).at(-1)?.['msg']).toBe('shutdown complete');
    expect(served.stdout.join('')).toBe('');
    // Removed when the gateway stopped.
    expect(existsSync(served.pidFile)).toBe(false);
  });

  it.skipIf(LOGROTATE === undefined || LOGROTATE === '')(
    'rotated by logrotate with the config docs/operations.md gives: no line lost, none twice',
    async () => {
      const served = await serve();
      const documented = /```\n(\/var\/log\/switchyard\/switchyard\.log \{[\s\S]*?\n\})\n```/.exec(
        readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8'),
      )?.[1];
      expect(documented).toBeDefined();
      const config = join(served.directory, 'logrotate.conf');
      writeFileSync(
        config,
        `${(documented as string).replaceAll('/var/log/switchyard/switchyard.log', served.logFile).replaceAll('/run/switchyard/switchyard.pid', served.pidFile)}\n`,
        { mode: 0o644 },
      );
      mkdirSync(join(served.directory, 'logrotate'));
      const load = served.load();
      await untilServed(load, 100);
      // -f: rotate now, whatever `daily` says; a state file of its own, not the machine's.
      execFileSync(LOGROTATE as string, ['--force', '--state', join(served.directory, 'logrotate', 'status'), config]);
      await untilServed(load, load.count() + 100);
      const ids = await load.stop();
      await served.stop();
      const rotated = readdirSync(join(served.directory, 'log')).filter((name) => name !== 'switchyard.log');
      expect(rotated).toEqual(['switchyard.log.1']);
      expectEveryLineOnce(ids, [join(served.directory, 'log', 'switchyard.log.1'), served.logFile]);
    },
  );

  it('that cannot be opened refuses the start with the key and the reason, exit 78', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'switchyard-log-file-'));
    onTestFinished(() => rmSync(directory, { recursive: true, force: true }));
    writeFileSync(join(directory, 'not-a-folder'), '');
    const configPath = join(directory, 'switchyard.yaml');
    writeFileSync(
      configPath,
      stringify({
        server: { host: '127.0.0.1', port: 0 },
        database: { url: `sqlite:${join(directory, 'switchyard.db')}` },
        logging: { file: 'not-a-folder/switchyard.log' },
        upstreams: [],
        models: [],
      }),
    );
    const stderr: string[] = [];
    expect(await runCli(['serve', '--config', configPath], { stdout: () => undefined, stderr: (line) => stderr.push(line) })).toBe(78);
    expect(stderr.join('\n')).toMatch(/^switchyard: config error: logging\.file: cannot be opened: EEXIST.*not-a-folder/);
  });

  it('beside a server.pid_file that cannot be written: the gateway stops again, exit 78 naming the key', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'switchyard-pid-file-'));
    onTestFinished(() => rmSync(directory, { recursive: true, force: true }));
    const configPath = join(directory, 'switchyard.yaml');
    writeFileSync(
      configPath,
      stringify({
        server: { host: '127.0.0.1', port: 0, pid_file: 'missing-folder/switchyard.pid' },
        database: { url: `sqlite:${join(directory, 'switchyard.db')}` },
        upstreams: [],
        models: [],
      }),
    );
    const child = spawn(process.execPath, [BIN, 'serve', '--config', configPath], { stdio: ['ignore', 'ignore', 'pipe'] });
    onTestFinished(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    const stderr: string[] = [];
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
    expect(await new Promise((resolve) => child.once('exit', resolve))).toBe(78);
    expect(stderr.join('')).toMatch(/switchyard: config error: server\.pid_file: cannot be written: ENOENT/);
  });
});
