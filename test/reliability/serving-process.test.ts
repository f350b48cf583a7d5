import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { stringify } from 'yaml';
import { runCli } from '../../src/cli/main.js';
import { openStores } from '../../src/store/index.js';
import { startFaultUpstream, type FaultUpstream } from '../fake-upstreams/fault-upstream.js';

const BIN = fileURLToPath(new URL('../../bin/switchyard.js', import.meta.url));
let upstream: FaultUpstream;
let directory: string;

beforeAll(async () => {
  upstream = await startFaultUpstream();
  directory = mkdtempSync(join(tmpdir(), 'switchyard-process-'));
});
afterAll(async () => {
  await upstream.close();
  rmSync(directory, { recursive: true, force: true });
});

describe('switchyard serve, as its own process, behind an upstream that answers garbage', () => {
  it('answers 502 to each bad answer while a stream runs beside them, keeps serving, loses no row, and exits 0 on SIGTERM', async () => {
    const database = join(directory, 'switchyard.db');
    const configPath = join(directory, 'switchyard.yaml');
    const faults = ['html', 'empty', 'bytes', 'null', 'bad-choices'];
    const faultModels = faults.flatMap((fault) => [`${fault}-1`, `${fault}-2`]);
    writeFileSync(
      configPath,
      stringify({
        server: { host: '127.0.0.1', port: 0 },
        database: { url: `sqlite:${database}` },
        request_log: { flush_interval_ms: 50 },
        // A credential per model (one endpoint, one pool), and two of each fault: a bad answer cools
        // only its own credential, so neither the healthy stream beside them nor the other answer
        // of the same fault (however late it arrives) is refused for it.
        upstreams: [...faultModels, 'ok'].map((model) => ({ id: `fault-${model}`, provider: 'openai', base_url: `${upstream.url}/v1`, api_key: 'sk-fault' })),
        models: [...faultModels, 'ok'].map((model) => ({
          id: model,
          type: 'chat',
          routes: [{ upstream: `fault-${model}`, model: model.replace(/-[12]$/, '') }],
        })),
      }),
    );
    const stdout: string[] = [];
    expect(await runCli(['tokens', 'create', '--team', 'ops', '--config', configPath], { stdout: (line) => stdout.push(line), stderr: () => undefined })).toBe(
      0,
    );
    const token = stdout.at(-1) as string;

    const child = spawn(process.execPath, [BIN, 'serve', '--config', configPath], { stdio: ['ignore', 'pipe', 'ignore'] });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // A failed expectation must not leave the gateway running after the suite.
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
    const post = async (model: string, stream: boolean) => {
      const response = await request(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hi' }], stream }),
      });
      return { status: response.statusCode, text: await response.body.text(), id: String(response.headers['x-request-id']) };
    };

    const stream = post('ok', true);
    const answers = await Promise.all(faultModels.map((model) => post(model, false)));
    for (const answer of answers) {
      expect(answer.status).toBe(502);
      expect(JSON.parse(answer.text)).toMatchObject({ error: { code: 'upstream_invalid_response' } });
    }
    const streamed = await stream;
    expect(streamed.status).toBe(200);
    expect(streamed.text).toContain('data: [DONE]');
    const health = await request(`${url}/health`);
    expect(health.statusCode).toBe(200);
    await health.body.text();
    expect(child.exitCode).toBeNull();

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(lines.filter((line) => (line['level'] as number) >= 50)).toEqual([]);
    const stores = await openStores(`sqlite:${database}`);
    try {
      for (const { id } of [...answers, streamed]) expect((await stores.requestLogs.query({ requestId: id, limit: 1 })).length).toBe(1);
    } finally {
      await stores.close();
    }
  });
});
