import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { stringify } from 'yaml';
import { runCli } from '../../src/cli/main.js';
import { openStores } from '../../src/store/index.js';
import { slowStreamUpstream, type SlowStreamUpstream } from '../support/slow-stream-upstream.js';

const BIN = fileURLToPath(new URL('../../bin/switchyard.js', import.meta.url));
const CHUNKS = 10;
const CHUNK_INTERVAL_MS = 100;

let upstream: SlowStreamUpstream;
let directory: string;

beforeAll(async () => {
  upstream = await slowStreamUpstream(CHUNKS, CHUNK_INTERVAL_MS);
  directory = mkdtempSync(join(tmpdir(), 'switchyard-sighup-'));
});
afterAll(async () => {
  await upstream.close();
  rmSync(directory, { recursive: true, force: true });
});

// SIGHUP once only had to leave the gateway alone; it now reopens the log file and reloads the
// config (docs/operations.md). What stays proven: it never exits nor drains, and nothing in flight notices.
describe('SIGHUP to switchyard serve', () => {
  it('reloads the config and never exits: a stream under way completes, later requests are served, every row is written; SIGTERM then exits 0', async () => {
    const database = join(directory, 'switchyard.db');
    const configPath = join(directory, 'switchyard.yaml');
    writeFileSync(
      configPath,
      stringify({
        server: { host: '127.0.0.1', port: 0 },
        database: { url: `sqlite:${database}` },
        request_log: { flush_interval_ms: 50 },
        upstreams: [{ id: 'slow', provider: 'openai', base_url: `${upstream.url}/v1`, api_key: 'sk-slow' }],
        models: [{ id: 'slow', type: 'chat', routes: [{ upstream: 'slow', model: 'slow' }] }],
      }),
    );
    const stdout: string[] = [];
    expect(await runCli(['tokens', 'create', '--team', 'ops', '--config', configPath], { stdout: (line) => stdout.push(line), stderr: () => undefined })).toBe(
      0,
    );
    const token = stdout.at(-1) as string;

    const child = spawn(process.execPath, [BIN, 'serve', '--config', configPath], { stdio: ['ignore', 'pipe', 'ignore'] });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    onTestFinished(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    const lines: Array<Record<string, unknown>> = [];
    const url = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).on('line', (line) => {
        const entry = JSON.parse(line) as Record<string, unknown>;
        lines.push(entry);
        if (typeof entry['url'] === 'string') resolve(entry['url']);
      });
      child.once('exit', (code) => reject(new Error(`switchyard serve exited with ${code} before listening`)));
    });
    const post = async (stream: boolean) => {
      const response = await request(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'slow', messages: [{ role: 'user', content: 'Hi' }], stream }),
      });
      return { status: response.statusCode, text: await response.body.text(), id: String(response.headers['x-request-id']) };
    };

    const stream = post(true);
    // Mid-stream: a few chunks are out, most are still to come.
    await sleep(CHUNK_INTERVAL_MS * 3);
    child.kill('SIGHUP');
    await sleep(CHUNK_INTERVAL_MS * 2);
    expect(child.exitCode).toBeNull();
    expect(child.signalCode).toBeNull();
    const streamed = await stream;
    expect(streamed.status).toBe(200);
    expect(streamed.text).toContain(`${CHUNKS - 1} `);
    expect(streamed.text).toContain('data: [DONE]');
    // Served after the signal, too.
    const after = await post(true);
    expect(after.status).toBe(200);
    expect(child.exitCode).toBeNull();
    expect(lines.some((line) => line['level'] === 30 && line['msg'] === 'SIGHUP: reloading the config')).toBe(true);
    // The file did not change: the reload applies nothing, and says so.
    expect(lines.some((line) => line['level'] === 30 && line['msg'] === 'config reloaded: nothing to apply')).toBe(true);

    child.kill('SIGTERM');
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(lines.filter((line) => (line['level'] as number) >= 50)).toEqual([]);
    const stores = await openStores(`sqlite:${database}`);
    try {
      for (const { id } of [streamed, after]) {
        const [row] = await stores.requestLogs.query({ requestId: id, limit: 1 });
        expect(row?.status).toBe(200);
      }
    } finally {
      await stores.close();
    }
  });
});
