import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startOpenAIFakeGateway, type OpenAIFakeGateway } from '../support/start-openai-fake-gateway.js';

/** Debian's `prometheus` (`.ci/run` sets it); the suite is skipped, and reported, without it. */
const PROMETHEUS = process.env['TEST_PROMETHEUS'] === undefined || process.env['TEST_PROMETHEUS'] === '' ? null : process.env['TEST_PROMETHEUS'];

const hi = [{ role: 'user', content: 'Say hi.' }];

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

interface VectorAnswer {
  status: string;
  data: { resultType: string; result: Array<{ metric: Record<string, string>; value: [number, string] }> };
}

describe.skipIf(PROMETHEUS === null)('a real Prometheus scraping the gateway', () => {
  let harness: OpenAIFakeGateway;
  let prometheus: ChildProcess;
  let prometheusUrl: string;
  let directory: string;
  const output: string[] = [];

  async function query(promql: string): Promise<VectorAnswer['data']['result']> {
    const answer = await request(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(promql)}`);
    const body = (await answer.body.json()) as VectorAnswer;
    expect(body.status).toBe('success');
    return body.data.result;
  }

  beforeAll(async () => {
    harness = await startOpenAIFakeGateway({ config: { metrics: { listen: '127.0.0.1:0' } } });
    const metricsToken = await harness.createToken({ team: 'ops', scopes: ['metrics'] });
    directory = mkdtempSync(join(tmpdir(), 'switchyard-prometheus-'));
    writeFileSync(join(directory, 'token'), metricsToken);
    const listener = new URL(harness.gateway.metricsUrl as string);
    const main = new URL(harness.gateway.url);
    // Both ways of scraping docs/metrics.md gives: the listener without a token, the main port with one.
    writeFileSync(
      join(directory, 'prometheus.yml'),
      [
        'global: { scrape_interval: 1s, evaluation_interval: 1s }',
        'scrape_configs:',
        `  - job_name: listener`,
        `    static_configs: [{ targets: ['${listener.host}'] }]`,
        `  - job_name: main-port`,
        `    authorization: { credentials_file: ${join(directory, 'token')} }`,
        `    static_configs: [{ targets: ['${main.host}'] }]`,
        '',
      ].join('\n'),
    );
    const port = await freePort();
    prometheusUrl = `http://127.0.0.1:${port}`;
    prometheus = spawn(
      PROMETHEUS as string,
      [
        `--config.file=${join(directory, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(directory, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    prometheus.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    prometheus.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    await vi.waitFor(
      async () => {
        const ready = await request(`${prometheusUrl}/-/ready`);
        await ready.body.text();
        expect(ready.statusCode).toBe(200);
      },
      { timeout: 30_000, interval: 200 },
    );
  }, 60_000);

  afterAll(async () => {
    if (prometheus !== undefined && prometheus.exitCode === null) {
      const exited = new Promise((resolve) => prometheus.once('exit', resolve));
      prometheus.kill('SIGTERM');
      await exited;
    }
    await harness?.close();
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
  });

  it('scrapes both targets, and answers PromQL over what the gateway counted', async () => {
    for (let index = 0; index < 12; index++) await harness.client.chat.completions.create({ model: 'gpt-4o-mini', messages: hi as never });
    await harness.client.embeddings.create({ model: 'text-embedding-3-small', input: 'hello' });
    const served = 13;
    await vi.waitFor(
      async () => {
        const up = await query('up');
        expect(up.map((sample) => `${sample.metric['job']}=${sample.value[1]}`).sort(), output.join('')).toEqual(['listener=1', 'main-port=1']);
        const byModel = await query('sum by (model) (switchyard_requests_total{job="listener"})');
        const counts = Object.fromEntries(byModel.map((sample) => [sample.metric['model'], Number(sample.value[1])]));
        expect(counts).toEqual({ 'gpt-4o-mini': 12, 'text-embedding-3-small': 1 });
        // Both targets are the same gateway: the same counts through the token-protected port.
        expect(Number((await query('sum(switchyard_requests_total{job="main-port"})'))[0]?.value[1])).toBe(served);
      },
      { timeout: 20_000, interval: 500 },
    );
    // A rate needs two samples of a counter that moved between them.
    for (let index = 0; index < 5; index++) await harness.client.chat.completions.create({ model: 'gpt-4o-mini', messages: hi as never });
    await vi.waitFor(
      async () => {
        const rates = await query('sum(rate(switchyard_requests_total{job="listener"}[1m])) by (model)');
        const chat = rates.find((sample) => sample.metric['model'] === 'gpt-4o-mini');
        expect(Number(chat?.value[1])).toBeGreaterThan(0);
        const p95 = await query('histogram_quantile(0.95, sum by (le) (rate(switchyard_time_to_first_byte_seconds_bucket{job="listener"}[1m])))');
        expect(Number(p95[0]?.value[1])).toBeGreaterThan(0);
        const tokens = await query('sum(switchyard_tokens_total{job="listener",kind="prompt"})');
        expect(Number(tokens[0]?.value[1])).toBeGreaterThan(0);
      },
      { timeout: 20_000, interval: 500 },
    );
    const healthy = await query('sum(switchyard_credential_state{job="listener",state="healthy"})');
    expect(Number(healthy[0]?.value[1])).toBe(harness.gateway.credentials.list().filter((credential) => credential.state === 'healthy').length);
  }, 60_000);
});
