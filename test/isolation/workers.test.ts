import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import SqliteDatabase from 'better-sqlite3';
import { request } from 'undici';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { startFaultUpstream, type FaultUpstream } from '../fake-upstreams/fault-upstream.js';
import { parseExposition, total } from '../support/prometheus-text.js';
import { cli } from '../support/run-cli.js';
import { sparePort } from './support/private-redis.js';

const BIN = fileURLToPath(new URL('../../bin/switchyard.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REDIS_URL = process.env.TEST_REDIS_URL;

interface Served {
  readonly child: ChildProcess;
  /** stdout's JSON log lines, every process's. */
  readonly lines: Array<Record<string, unknown>>;
  /** stderr as written (the banner). */
  readonly stderr: () => string;
  readonly exited: Promise<number | null>;
}

function serve(configPath: string, workers: string): Served {
  const child = spawn(process.execPath, [BIN, 'serve', '--config', configPath, '--workers', workers], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: Array<Record<string, unknown>> = [];
  let stderr = '';
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => lines.push(JSON.parse(line) as Record<string, unknown>));
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, lines, stderr: () => stderr, exited };
}

function writeConfig(directory: string, extra: Record<string, unknown>, upstreamUrl: string): string {
  const path = join(directory, 'switchyard.yaml');
  writeFileSync(
    path,
    stringify({
      server: { host: '127.0.0.1', port: 0, shutdown_timeout_ms: 2_000 },
      database: { url: `sqlite:${join(directory, 'switchyard.db')}` },
      request_log: { flush_interval_ms: 100 },
      upstreams: [{ id: 'ok-upstream', provider: 'openai', base_url: `${upstreamUrl}/v1`, api_key: 'sk-test' }],
      models: [{ id: 'ok', type: 'chat', routes: [{ upstream: 'ok-upstream', model: 'ok' }] }],
      ...extra,
    }),
  );
  return path;
}

/**
 * `/ready`'s status on a connection of its own; 0 when no answer came within half a second (a
 * connection the cluster was handing to a worker as it was killed is lost with it).
 */
async function ready(url: string): Promise<number> {
  try {
    const answer = await request(`${url}/ready`, { headers: { connection: 'close' }, reset: true, headersTimeout: 500, bodyTimeout: 500 });
    await answer.body.text();
    return answer.statusCode;
  } catch {
    return 0;
  }
}

describe('switchyard serve --workers', () => {
  let upstream: FaultUpstream;
  let directory: string;
  beforeAll(async () => {
    upstream = await startFaultUpstream();
  });
  afterAll(async () => {
    await upstream?.close();
  });

  it('refuses more than one worker on memory state, naming state.url', async () => {
    directory = mkdtempSync(join(tmpdir(), 'switchyard-workers-'));
    onTestFinished(() => rmSync(directory, { recursive: true, force: true }));
    const served = serve(writeConfig(directory, { state: { url: 'memory' } }, upstream.url), '2');
    expect(await served.exited).toBe(78);
    expect(served.stderr()).toMatch(/server\.workers: is 2, which needs state\.url on Redis/);
  });

  it('refuses a --workers that is neither a number from 1 to 256 nor auto, starting nothing', async () => {
    directory = mkdtempSync(join(tmpdir(), 'switchyard-workers-'));
    onTestFinished(() => rmSync(directory, { recursive: true, force: true }));
    const configPath = writeConfig(directory, {}, upstream.url);
    for (const value of ['0', '2.5', 'many', '257']) {
      const run = await cli('serve', '--config', configPath, '--workers', value);
      expect({ value, code: run.code }).toEqual({ value, code: 64 });
      expect(run.stderr.join('\n')).toContain(`--workers: expected a number from 1 to 256 or auto, got "${value}"`);
    }
    expect(existsSync(join(directory, 'switchyard.db'))).toBe(false);
  });

  it.skipIf(REDIS_URL === undefined)(
    'stops with exit 1 when a worker cannot start (its port is taken), instead of restarting it forever',
    async () => {
      directory = mkdtempSync(join(tmpdir(), 'switchyard-workers-'));
      const taken = createServer();
      await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
      onTestFinished(() => {
        taken.close();
        rmSync(directory, { recursive: true, force: true });
      });
      const port = (taken.address() as AddressInfo).port;
      const configPath = writeConfig(directory, { state: { url: REDIS_URL, key_prefix: `switchyard-workers-${randomUUID()}:` } }, upstream.url);
      writeFileSync(configPath, readFileSync(configPath, 'utf8').replace('port: 0', `port: ${port}`));
      const served = serve(configPath, '2');
      expect(await served.exited).toBe(1);
      expect(served.lines.find((line) => line['worker'] === 0 && line['level'] === 50)?.['msg']).toMatch(
        /^worker \d exited \(code 1\) before every worker listened/,
      );
      expect(served.stderr()).not.toContain('Switchyard is listening');
    },
    30_000,
  );

  it.skipIf(REDIS_URL === undefined)(
    'serves one port from two workers made once, restarts a killed worker (not ready meanwhile), and drains them all on SIGTERM',
    async () => {
      directory = mkdtempSync(join(tmpdir(), 'switchyard-workers-'));
      onTestFinished(() => rmSync(directory, { recursive: true, force: true }));
      const metricsPort = await sparePort();
      const configPath = writeConfig(
        directory,
        { state: { url: REDIS_URL, key_prefix: `switchyard-workers-${randomUUID()}:` }, metrics: { listen: `127.0.0.1:${metricsPort}` } },
        upstream.url,
      );
      const served = serve(configPath, '2');
      onTestFinished(() => {
        if (served.child.exitCode === null) served.child.kill('SIGKILL');
      });
      await vi.waitFor(() => expect(served.stderr()).toContain('admin token:'), { timeout: 20_000, interval: 100 });
      // The banner once, by the primary, with the one bootstrap token; each worker says it listens.
      const banner = served.stderr();
      expect(banner.match(/Switchyard is listening on/g)).toHaveLength(1);
      expect(banner.match(/admin token: /g)).toHaveLength(1);
      expect(banner).toContain('workers:         2 processes');
      const token = (/admin token: (\S+)/.exec(banner) as RegExpExecArray)[1] as string;
      const url = (/Switchyard is listening on (\S+)/.exec(banner) as RegExpExecArray)[1] as string;
      const listening = (worker: number) =>
        served.lines.filter((line) => line['worker'] === worker && String(line['msg']).startsWith('Switchyard listening on'));
      // stdout and stderr are two pipes: the log lines may come after the banner.
      await vi.waitFor(() => expect([0, 1, 2].map((worker) => listening(worker).length)).toEqual([1, 1, 1]), { timeout: 5_000, interval: 50 });
      expect(await ready(url)).toBe(200);

      // New connections go to both workers; each access line names its worker.
      for (let index = 0; index < 12; index++) {
        const answer = await request(`${url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', connection: 'close' },
          body: JSON.stringify({ model: 'ok', messages: [{ role: 'user', content: 'Hi' }] }),
          reset: true,
        });
        expect(answer.statusCode).toBe(200);
        await answer.body.text();
      }
      await vi.waitFor(() => expect(served.lines.filter((line) => line['msg'] === 'request')).toHaveLength(12), { timeout: 5_000, interval: 50 });
      expect(new Set(served.lines.filter((line) => line['msg'] === 'request').map((line) => line['worker']))).toEqual(new Set([1, 2]));

      // A scrape shows both workers added up: on the primary's metrics.listen, and on the main port whichever worker takes it.
      const requestsCounted = async (scrapeUrl: string, headers: Record<string, string>): Promise<number> => {
        const answer = await request(scrapeUrl, { headers: { ...headers, connection: 'close' }, reset: true });
        expect(answer.statusCode).toBe(200);
        return total(parseExposition(await answer.body.text()), 'switchyard_requests_total', { endpoint: 'chat.completions' });
      };
      expect(await requestsCounted(`http://127.0.0.1:${metricsPort}/metrics`, {})).toBe(12);
      for (let index = 0; index < 4; index++) expect(await requestsCounted(`${url}/metrics`, { authorization: `Bearer ${token}` })).toBe(12);

      // Worker 1 killed: the others say they are not ready until it is back, and the primary restarts it.
      process.kill(listening(1)[0]?.['pid'] as number, 'SIGKILL');
      await vi.waitFor(async () => expect(await ready(url)).toBe(503), { timeout: 3_000, interval: 20 });
      await vi.waitFor(() => expect(listening(1)).toHaveLength(2), { timeout: 15_000, interval: 100 });
      // The primary's line (worker 0) about worker 1.
      expect(served.lines.find((line) => line['worker'] === 0 && line['level'] === 40)).toMatchObject({
        msg: 'worker 1 exited (SIGKILL); restarting it in 1000 ms',
        exitedWorker: 1,
        signal: 'SIGKILL',
        restartInMs: 1_000,
      });
      await vi.waitFor(async () => expect(await ready(url)).toBe(200), { timeout: 5_000, interval: 50 });

      served.child.kill('SIGTERM');
      expect(await served.exited).toBe(0);
      for (const worker of [0, 1, 2]) expect(served.lines.some((line) => line['worker'] === worker && line['msg'] === 'shutdown complete')).toBe(true);
      // The request log names the worker of each row, as its access line did.
      const database = new SqliteDatabase(join(directory, 'switchyard.db'), { readonly: true });
      onTestFinished(() => {
        database.close();
      });
      const logged = database.prepare("select id, worker from request_logs where endpoint = 'chat.completions'").all() as Array<{ id: string; worker: number }>;
      const accessed = served.lines.filter((line) => line['msg'] === 'request').map((line) => ({ id: line['requestId'], worker: line['worker'] }));
      expect(new Set(logged.map((row) => `${row.id} ${row.worker}`))).toEqual(new Set(accessed.map((line) => `${String(line.id)} ${String(line.worker)}`)));
    },
    60_000,
  );
});
