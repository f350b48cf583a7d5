import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { runCli } from '../../src/cli/main.js';
import { openStores } from '../../src/store/index.js';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../fake-upstreams/openai-upstream.js';

const BIN = fileURLToPath(new URL('../../bin/switchyard.js', import.meta.url));

let upstream: FakeOpenAIUpstream;
let directory: string;

beforeAll(async () => {
  upstream = await startFakeOpenAIUpstream({ splitBytes: false, chunkDelayMs: 80 });
  directory = mkdtempSync(join(tmpdir(), 'switchyard-shutdown-'));
});
afterAll(async () => {
  await upstream.close();
  rmSync(directory, { recursive: true, force: true });
});

/** Starts `switchyard serve` as its own process and resolves with its URL once it listens. */
function serve(configPath: string): Promise<{ child: ChildProcess; url: string; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--config', configPath], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.on('line', (line) => {
      const entry = JSON.parse(line) as { url?: string };
      if (entry.url !== undefined) resolve({ child, url: entry.url, exited });
    });
    child.once('exit', (code) => reject(new Error(`switchyard serve exited with ${code} before listening`)));
  });
}

/** Writes a config for a gateway in front of the fake upstream and creates a token with the CLI. */
async function prepare(name: string, shutdownTimeoutMs: number): Promise<{ configPath: string; database: string; token: string }> {
  const database = join(directory, `${name}.db`);
  const configPath = join(directory, `${name}.yaml`);
  writeFileSync(
    configPath,
    stringify({
      server: { host: '127.0.0.1', port: 0, shutdown_timeout_ms: shutdownTimeoutMs },
      database: { url: `sqlite:${database}` },
      logging: { level: 'info' },
      // A flush interval longer than the test: every row written must be written by the shutdown.
      request_log: { flush_interval_ms: 600_000, batch_size: 10_000 },
      upstreams: [{ id: 'fake', provider: 'openai', base_url: upstream.url, api_key: 'sk-fake' }],
      models: [{ id: 'chat', type: 'chat', routes: [{ upstream: 'fake', model: 'fake-model' }] }],
    }),
  );
  const stdout: string[] = [];
  const created = await runCli(['tokens', 'create', '--team', 'ops', '--config', configPath], { stdout: (line) => stdout.push(line), stderr: () => undefined });
  expect(created).toBe(0);
  return { configPath, database, token: stdout.at(-1) as string };
}

async function requestLogRows(database: string) {
  const stores = await openStores(`sqlite:${database}`);
  try {
    return await stores.requestLogs.query({ limit: 1000 });
  } finally {
    await stores.close();
  }
}

describe('SIGTERM', () => {
  it('finishes in-flight streams, writes every request log row, and exits 0', async () => {
    const { configPath, database, token } = await prepare('drain', 10_000);
    const { child, url, exited } = await serve(configPath);
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const body = (stream: boolean) => JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'Hi' }], stream });

    const plain = await Promise.all(Array.from({ length: 20 }, () => fetch(`${url}/v1/chat/completions`, { method: 'POST', headers, body: body(false) })));
    for (const response of plain) {
      expect(response.status).toBe(200);
      await response.arrayBuffer();
    }
    const streams = await Promise.all(Array.from({ length: 3 }, () => fetch(`${url}/v1/chat/completions`, { method: 'POST', headers, body: body(true) })));
    const readers = streams.map((response) => response.text());
    // The streams have started (headers are in) and still have about a second to run.
    child.kill('SIGTERM');
    const texts = await Promise.all(readers);
    for (const text of texts) expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(await exited).toBe(0);

    const rows = await requestLogRows(database);
    expect(rows).toHaveLength(23);
    expect(rows.every((row) => row.status === 200 && row.endpoint === 'chat.completions' && row.team === 'ops')).toBe(true);
    expect(rows.filter((row) => row.usageSource === 'upstream')).toHaveLength(23);
  });

  it('cuts a stream that outlives the shutdown deadline, logs it, and still exits 0', async () => {
    const { configPath, database, token } = await prepare('deadline', 300);
    upstream.options = { splitBytes: false, chunkDelayMs: 400 };
    const { child, url, exited } = await serve(configPath);
    const response = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'Hi' }], stream: true }),
    });
    expect(response.status).toBe(200);
    child.kill('SIGTERM');
    const text = await response.text().catch(() => 'cut');
    expect(text.includes('data: [DONE]')).toBe(false);
    expect(await exited).toBe(0);
    const rows = await requestLogRows(database);
    expect(rows).toHaveLength(1);
    // Cut by the gateway, not by the client; usage is estimated from what was relayed.
    expect(rows[0]).toMatchObject({ status: 503, errorCode: 'shutdown_deadline', usageSource: 'estimated' });
    upstream.options = { splitBytes: false, chunkDelayMs: 80 };
  });
});
