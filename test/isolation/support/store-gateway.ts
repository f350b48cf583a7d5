import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { stringify } from 'yaml';
import { runCli } from '../../../src/cli/main.js';

const BIN = fileURLToPath(new URL('../../../bin/switchyard.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const START_TIMEOUT_MS = 30_000;

/** `switchyard serve` as its own process, for the database outage suites: its log lines, its URL, a token. */
export interface StoreGateway {
  readonly url: string;
  readonly token: string;
  readonly configPath: string;
  /** Every stdout line, parsed (the JSON log). */
  readonly lines: Array<Record<string, unknown>>;
  /** Every stdout line as written, for looking for bytes that must never be there. */
  readonly rawLines: string[];
  readonly child: ChildProcess;
  chat(model?: string, token?: string): Promise<{ status: number; id: string; ms: number }>;
  /** A token made by the CLI, a process of its own, while the gateway runs. */
  createToken(): Promise<string>;
  /** GET on the admin API, timed. */
  admin(path: string): Promise<{ status: number; code: string | undefined; ms: number }>;
  /** GET /health, timed. */
  health(): Promise<number>;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
  /** Kills it if still running, and removes its directory. */
  close(): void;
}

/** Starts a gateway on `databaseUrl` (created and migrated by the CLI first, which also makes the token). */
export async function startStoreGateway(databaseUrl: string, upstreamUrl: string, extra: Record<string, unknown> = {}): Promise<StoreGateway> {
  const directory = mkdtempSync(join(tmpdir(), 'switchyard-store-'));
  const configPath = join(directory, 'switchyard.yaml');
  writeFileSync(
    configPath,
    stringify({
      server: { host: '127.0.0.1', port: 0, shutdown_timeout_ms: 2_000 },
      database: { url: databaseUrl },
      logging: { access: false },
      request_log: { flush_interval_ms: 100 },
      upstreams: [{ id: 'ok-upstream', provider: 'openai', base_url: `${upstreamUrl}/v1`, api_key: 'sk-test' }],
      models: [{ id: 'ok', type: 'chat', routes: [{ upstream: 'ok-upstream', model: 'ok' }] }],
      ...extra,
    }),
  );
  const out: string[] = [];
  const status = await runCli(['tokens', 'create', '--team', 'ops', '--scopes', 'chat,admin', '--config', configPath], {
    stdout: (line) => out.push(line),
    stderr: () => undefined,
  });
  if (status !== 0) throw new Error(`tokens create exited ${status}`);
  const token = out.at(-1) as string;
  const child = spawn(process.execPath, [BIN, 'serve', '--config', configPath], { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] });
  const lines: Array<Record<string, unknown>> = [];
  const rawLines: string[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    // Bounded, so that a start that hangs fails as such, with the last thing the gateway logged.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`switchyard serve did not listen within ${START_TIMEOUT_MS} ms; its last log line: ${rawLines.at(-1) ?? '(none)'}`));
    }, START_TIMEOUT_MS);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`switchyard serve exited with ${code} before listening`));
    });
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      rawLines.push(line);
      const entry = JSON.parse(line) as Record<string, unknown>;
      lines.push(entry);
      if (typeof entry['url'] === 'string' && entry['msg'] !== undefined && String(entry['msg']).startsWith('Switchyard listening')) {
        clearTimeout(timer);
        resolve(entry['url']);
      }
    });
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    url,
    token,
    configPath,
    lines,
    rawLines,
    child,
    async chat(model = 'ok', secret = token) {
      const started = performance.now();
      const response = await request(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hi' }] }),
      });
      await response.body.text();
      return { status: response.statusCode, id: String(response.headers['x-request-id']), ms: performance.now() - started };
    },
    async createToken() {
      const lines: string[] = [];
      const code = await runCli(['tokens', 'create', '--team', 'ops', '--config', configPath], { stdout: (line) => lines.push(line), stderr: () => undefined });
      if (code !== 0) throw new Error(`tokens create exited ${code}`);
      return lines.at(-1) as string;
    },
    async admin(path) {
      const started = performance.now();
      const response = await request(`${url}${path}`, { headers: { authorization: `Bearer ${token}` } });
      const body = (await response.body.json()) as { error?: { code?: string } };
      return { status: response.statusCode, code: body.error?.code, ms: performance.now() - started };
    },
    async health() {
      const started = performance.now();
      const response = await request(`${url}/health`);
      await response.body.text();
      return performance.now() - started;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
    close() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/**
 * Another process holding SQLite's write lock on `file` (`BEGIN EXCLUSIVE`, as the CLI, a backup
 * or `VACUUM` would) for `holdMs`; resolves once the lock is taken, with a promise of its release.
 */
export async function holdSqliteLock(file: string, holdMs: number): Promise<{ released: Promise<void> }> {
  const script = `
    const Database = require('better-sqlite3');
    const db = new Database(process.argv[1]);
    db.exec('BEGIN EXCLUSIVE');
    process.stdout.write('locked\\n');
    setTimeout(() => { db.exec('COMMIT'); db.close(); process.stdout.write('released\\n'); }, Number(process.argv[2]));
  `;
  const child = spawn(process.execPath, ['-e', script, file, String(holdMs)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const released = new Promise<void>((resolve, reject) =>
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`the lock holder exited ${code}`)))),
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`the lock holder exited ${code} before locking`)));
  });
  return { released };
}
