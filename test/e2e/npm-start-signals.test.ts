import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { stringify } from 'yaml';
import { runCli } from '../../src/cli/main.js';
import { slowStreamUpstream, type SlowStreamUpstream } from '../support/slow-stream-upstream.js';

/** `npm start` and the signals a terminal or a process manager sends to it (docs/operations.md, Signals). */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CHUNKS = 10;
const CHUNK_INTERVAL_MS = 100;

let upstream: SlowStreamUpstream;
/** A stream long enough (4 s) to still be under way when the second signal comes. */
let longUpstream: SlowStreamUpstream;
let directory: string;
let token: string;

beforeAll(async () => {
  upstream = await slowStreamUpstream(CHUNKS, CHUNK_INTERVAL_MS);
  longUpstream = await slowStreamUpstream(40, CHUNK_INTERVAL_MS);
  // A folder like a user's clone: the package's own package.json (its `start` script), its bin,
  // build and dependencies, and a switchyard.yaml found as ./switchyard.yaml.
  directory = mkdtempSync(join(tmpdir(), 'switchyard-npm-signals-'));
  copyFileSync(join(ROOT, 'package.json'), join(directory, 'package.json'));
  for (const name of ['bin', 'dist', 'node_modules']) symlinkSync(join(ROOT, name), join(directory, name));
  mkdirSync(join(directory, 'data'));
  writeFileSync(
    join(directory, 'switchyard.yaml'),
    stringify({
      server: { host: '127.0.0.1', port: 0 },
      database: { url: `sqlite:${join(directory, 'data', 'switchyard.db')}` },
      upstreams: [
        { id: 'slow', provider: 'openai', base_url: `${upstream.url}/v1`, api_key: 'sk-slow' },
        { id: 'long', provider: 'openai', base_url: `${longUpstream.url}/v1`, api_key: 'sk-long' },
      ],
      models: [
        { id: 'slow', type: 'chat', routes: [{ upstream: 'slow', model: 'slow' }] },
        { id: 'long', type: 'chat', routes: [{ upstream: 'long', model: 'long' }] },
      ],
    }),
  );
  const stdout: string[] = [];
  expect(
    await runCli(['tokens', 'create', '--team', 'ops', '--config', join(directory, 'switchyard.yaml')], {
      stdout: (line) => stdout.push(line),
      stderr: () => undefined,
    }),
  ).toBe(0);
  token = stdout.at(-1) as string;
});
afterAll(async () => {
  await upstream.close();
  await longUpstream.close();
  rmSync(directory, { recursive: true, force: true });
});

/** Every process below `pid` (npm's shell and the gateway), read from ps. */
function descendants(pid: number): number[] {
  const rows = execFileSync('ps', ['-e', '-o', 'pid=,ppid='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((row) => row.trim().split(/\s+/).map(Number) as [number, number]);
  const found: number[] = [];
  const parents = [pid];
  while (parents.length > 0) {
    const parent = parents.pop() as number;
    for (const [child, ppid] of rows) {
      if (ppid !== parent) continue;
      found.push(child);
      parents.push(child);
    }
  }
  return found;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** `ownGroup`: npm leads a process group of its own, as in a terminal, where Ctrl-C signals the whole group. */
async function startNpm(ownGroup = false): Promise<{ npm: ChildProcess; url: string; gatewayPids: number[] }> {
  const npm = spawn('npm', ['start', '--silent'], { cwd: directory, stdio: ['ignore', 'pipe', 'ignore'], detached: ownGroup });
  onTestFinished(() => {
    for (const pid of descendants(npm.pid as number)) if (alive(pid)) process.kill(pid, 'SIGKILL');
    if (npm.exitCode === null && npm.signalCode === null) npm.kill('SIGKILL');
  });
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: npm.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      const entry = JSON.parse(line) as { url?: string };
      if (entry.url !== undefined) resolve(entry.url);
    });
    npm.once('exit', (code) => reject(new Error(`npm start exited with ${code}`)));
  });
  return { npm, url, gatewayPids: descendants(npm.pid as number) };
}

async function stream(url: string, model = 'slow'): Promise<{ status: number; text: string }> {
  const response = await request(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hi' }], stream: true }),
  });
  return { status: response.statusCode, text: await response.body.text().catch(() => '(cut)') };
}

async function waitForExit(pids: readonly number[]): Promise<boolean> {
  for (let attempt = 0; attempt < 80; attempt++) {
    if (pids.every((pid) => !alive(pid))) return true;
    await sleep(100);
  }
  return false;
}

describe('npm start', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)('%s to npm drains: the stream under way completes, then npm and the gateway exit 0', async (signal) => {
    const { npm, url, gatewayPids } = await startNpm();
    expect(gatewayPids.length).toBeGreaterThan(0);
    const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
    const inFlight = stream(url);
    await sleep(CHUNK_INTERVAL_MS * 3);
    process.kill(npm.pid as number, signal);
    const streamed = await inFlight;
    expect(streamed.status).toBe(200);
    expect(streamed.text).toContain(`${CHUNKS - 1} `);
    expect(streamed.text).toContain('data: [DONE]');
    expect(await waitForExit(gatewayPids)).toBe(true);
    expect(await exited).toBe(0);
  });

  it('Ctrl-C in a terminal (SIGINT to the whole group: the gateway gets it twice, from the terminal and from npm) drains, not stops at once', async () => {
    const { npm, url, gatewayPids } = await startNpm(true);
    const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
    const inFlight = stream(url);
    await sleep(CHUNK_INTERVAL_MS * 3);
    process.kill(-(npm.pid as number), 'SIGINT');
    const streamed = await inFlight;
    expect(streamed.status).toBe(200);
    expect(streamed.text).toContain('data: [DONE]');
    expect(await waitForExit(gatewayPids)).toBe(true);
    expect(await exited).toBe(0);
  });

  it('a second SIGINT, a while after the first, stops at once: the long stream is cut, npm and the gateway exit (not 0)', async () => {
    const { npm, url, gatewayPids } = await startNpm();
    const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
    const inFlight = stream(url, 'long');
    await sleep(CHUNK_INTERVAL_MS * 3);
    process.kill(npm.pid as number, 'SIGINT');
    // Still draining: the stream has 3 s to go.
    await sleep(1_500);
    expect(gatewayPids.every((pid) => alive(pid))).toBe(true);
    process.kill(npm.pid as number, 'SIGINT');
    expect(await waitForExit(gatewayPids)).toBe(true);
    expect((await inFlight).text).not.toContain('data: [DONE]');
    expect(await exited).not.toBe(0);
  });
});
