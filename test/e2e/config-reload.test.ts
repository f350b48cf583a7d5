import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { stringify } from 'yaml';
import { runCli } from '../../src/cli/main.js';
import { reloadConfig } from '../../src/cli/reload-config.js';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../fake-upstreams/openai-upstream.js';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';

/** The config file read again while serving: SIGHUP and `switchyard reload` (docs/operations.md). */
const BIN = fileURLToPath(new URL('../../bin/switchyard.js', import.meta.url));

let upstream: FakeOpenAIUpstream;
beforeAll(async () => {
  upstream = await startFakeOpenAIUpstream();
});
afterAll(async () => {
  await upstream.close();
});

/** The file as the test gateway wrote it (server, database, logging), with these upstreams and models. */
function document(configPath: string, upstreams: unknown[], models: unknown[], extra: Record<string, unknown> = {}): string {
  const current = readFileSync(configPath, 'utf8').split('\nupstreams:')[0] as string;
  return `${current}\n${stringify({ upstreams, models, ...extra })}`;
}

async function chat(url: string, token: string, model: string, headers: Record<string, string> = {}): Promise<{ status: number; key: string | undefined }> {
  const before = upstream.requests.length;
  const response = await request(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    // A conversation of its own each time: one inferred session would keep every call on one credential.
    body: JSON.stringify({ model, messages: [{ role: 'user', content: `Hi ${randomUUID()}` }] }),
  });
  await response.body.text();
  const sent = upstream.requests.slice(before).at(-1)?.headers['authorization'];
  return { status: response.statusCode, key: typeof sent === 'string' ? sent.replace('Bearer ', '') : undefined };
}

describe('config reload, in process (what SIGHUP calls)', () => {
  let served: TestGateway;
  const lines: Array<Record<string, unknown>> = [];
  const upstreams = (keyA: string) => [
    { id: 'a', provider: 'openai', base_url: upstream.url, api_key: keyA },
    { id: 'b', provider: 'openai', base_url: upstream.url, api_key: 'sk-b-1' },
  ];
  const route = (model: string) => [
    { upstream: 'a', model },
    { upstream: 'b', model },
  ];

  beforeAll(async () => {
    upstream.options = { apiKeys: ['sk-a-1', 'sk-b-1'] };
    served = await startTestGateway(
      {
        upstreams: upstreams('sk-a-1'),
        models: [
          { id: 'gpt-4o-mini', type: 'chat', routes: route('gpt-4o-mini') },
          { id: 'old-model', type: 'chat', routes: route('gpt-4o-mini') },
          { id: 'a-only', type: 'chat', routes: [{ upstream: 'a', model: 'gpt-4o-mini' }] },
        ],
      },
      { logLines: lines },
    );
  });
  afterAll(async () => {
    upstream.options = {};
    await served.close();
  });

  it('applies a rotated key and a new model, drops a removed one, keeps sessions bound to credentials that remain, logs keys and never values', async () => {
    const { gateway, token, configPath } = served;
    expect((await chat(gateway.url, token, 'gpt-4o-mini')).status).toBe(200);
    expect((await chat(gateway.url, token, 'old-model')).status).toBe(200);
    const bound = await chat(gateway.url, token, 'gpt-4o-mini', { 'x-session-id': 'kept' });
    const boundTo = bound.key?.startsWith('sk-a') === true ? 'a' : 'b';

    // A stream on a's old key, under way across the rotation and the reload (the provider lets a
    // request it admitted finish): it completes with the credential it started with.
    upstream.options = { apiKeys: ['sk-a-1', 'sk-b-1'], chunkDelayMs: 150 };
    const before = upstream.requests.length;
    const inFlight = request(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'a-only', messages: [{ role: 'user', content: 'a long answer' }], stream: true }),
    }).then(async (response) => ({ status: response.statusCode, text: await response.body.text() }));
    await vi.waitFor(() => expect(upstream.requests.length).toBeGreaterThan(before), { timeout: 5_000, interval: 10 });
    expect(upstream.requests[before]?.headers['authorization']).toBe('Bearer sk-a-1');

    // The provider rotated a's key: the old one is refused from now on, and a is taken out of use
    // (401: failed, until reset) while b serves.
    upstream.options = { apiKeys: ['sk-a-2', 'sk-b-1'], chunkDelayMs: 150 };
    const stateOfA = () => gateway.credentials.list().find((credential) => credential.id === 'a')?.state;
    for (let attempt = 0; attempt < 40 && stateOfA() !== 'failed'; attempt++) expect((await chat(gateway.url, token, 'gpt-4o-mini')).status).toBe(200);
    expect(stateOfA()).toBe('failed');
    writeFileSync(
      configPath,
      document(configPath, upstreams('sk-a-2'), [
        { id: 'gpt-4o-mini', type: 'chat', routes: route('gpt-4o-mini') },
        { id: 'new-model', type: 'chat', routes: [{ upstream: 'a', model: 'gpt-4o-mini' }] },
        { id: 'a-only', type: 'chat', routes: [{ upstream: 'a', model: 'gpt-4o-mini' }] },
      ]),
    );
    const changes = await reloadConfig(gateway, { configPath, env: {} });
    expect(changes).toEqual({ applied: ['upstreams[0].api_key changed', 'models[1].id changed', 'models[1].routes[1] removed'], needsRestart: [] });

    const streamed = await inFlight;
    expect(streamed.status).toBe(200);
    expect(streamed.text).toContain('data: [DONE]');
    upstream.options = { apiKeys: ['sk-a-2', 'sk-b-1'] };
    // a starts over with its new key: new-model has no other route.
    expect(stateOfA()).toBe('healthy');
    const served1 = await chat(gateway.url, token, 'new-model');
    expect(served1).toEqual({ status: 200, key: 'sk-a-2' });
    expect((await chat(gateway.url, token, 'old-model')).status).toBe(404);
    for (let attempt = 0; attempt < 6; attempt++) expect((await chat(gateway.url, token, 'gpt-4o-mini')).status).toBe(200);
    // The session's credential still exists: it stays bound to it (with a's new key if it was a).
    const again = await chat(gateway.url, token, 'gpt-4o-mini', { 'x-session-id': 'kept' });
    expect(again.key?.startsWith(`sk-${boundTo}`)).toBe(true);

    const reloaded = lines.find((line) => typeof line['msg'] === 'string' && line['msg'].startsWith('config reloaded'));
    expect(reloaded?.['msg']).toBe('config reloaded: upstreams[0].api_key changed, models[1].id changed, models[1].routes[1] removed');
    expect(JSON.stringify(lines)).not.toMatch(/sk-a-|sk-b-/);
  });

  it('refuses a bad file (YAML, an unset variable, a route to no upstream, a route of the wrong type) with one error line, still serving the running config', async () => {
    const { gateway, token, configPath } = served;
    const good = readFileSync(configPath, 'utf8');
    const bad = [
      { file: 'upstreams: [ {\n', reason: /invalid YAML/ },
      {
        file: document(
          configPath,
          [{ id: 'a', provider: 'openai', base_url: upstream.url, api_key: '${ROTATED_KEY}' }],
          [{ id: 'gpt-4o-mini', type: 'chat', routes: [{ upstream: 'a', model: 'm' }] }],
        ),
        reason: /upstreams\[0\]\.api_key: environment variable ROTATED_KEY is not set/,
      },
      {
        file: document(configPath, upstreams('sk-a-3'), [{ id: 'gpt-4o-mini', type: 'chat', routes: [{ upstream: 'nowhere', model: 'm' }] }]),
        reason: /models\[0\]\.routes\[0\]\.upstream/,
      },
      {
        file: document(
          configPath,
          [...upstreams('sk-a-3'), { id: 'c', provider: 'cohere', api_key: 'co-1' }],
          [{ id: 'gpt-4o-mini', type: 'chat', routes: [{ upstream: 'c', model: 'm' }] }],
        ),
        reason: /cannot serve chat models/,
      },
    ];
    for (const { file, reason } of bad) {
      lines.length = 0;
      writeFileSync(configPath, file);
      expect(await reloadConfig(gateway, { configPath, env: {} })).toBeNull();
      const refused = lines.filter((line) => line['level'] === 50);
      expect(refused).toHaveLength(1);
      expect(refused[0]?.['msg']).toMatch(/^config reload refused, still serving the running config: /);
      expect(refused[0]?.['msg']).toMatch(reason);
      expect(await chat(gateway.url, token, 'new-model')).toEqual({ status: 200, key: 'sk-a-2' });
      expect(JSON.stringify(lines)).not.toMatch(/sk-a-|co-1/);
    }
    writeFileSync(configPath, good);
  });

  it('applies what it can and names what needs a restart, which it leaves as it is', async () => {
    const { gateway, configPath } = served;
    lines.length = 0;
    const good = readFileSync(configPath, 'utf8');
    writeFileSync(configPath, good.replace('shutdown_timeout_ms: 5000', 'shutdown_timeout_ms: 6000').replace('host: 127.0.0.1', 'host: 0.0.0.0'));
    const changes = await reloadConfig(gateway, { configPath, env: {} });
    expect(changes).toEqual({ applied: [], needsRestart: ['server.host changed', 'server.shutdown_timeout_ms changed'] });
    expect(lines.find((line) => line['level'] === 40)?.['msg']).toBe(
      'config reload: needs a restart, not applied: server.host changed, server.shutdown_timeout_ms changed',
    );
    // Still where it listened.
    expect(gateway.url).toMatch(/^http:\/\/127\.0\.0\.1:/);
    expect((await request(`${gateway.url}/health`)).statusCode).toBe(200);
    writeFileSync(configPath, good);
  });
});

describe('config reload of a serving process', () => {
  it('`switchyard reload` signals the pid file: the new key serves, the log says what changed', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'switchyard-reload-'));
    onTestFinished(() => rmSync(directory, { recursive: true, force: true }));
    const configPath = join(directory, 'switchyard.yaml');
    const config = (key: string) =>
      stringify({
        server: { host: '127.0.0.1', port: 0, pid_file: 'switchyard.pid' },
        database: { url: `sqlite:${join(directory, 'switchyard.db')}` },
        upstreams: [{ id: 'openai', provider: 'openai', base_url: upstream.url, api_key: '${OPENAI_API_KEY}' }],
        models: [{ id: 'gpt-4o-mini', type: 'chat', routes: [{ upstream: 'openai', model: 'gpt-4o-mini' }] }],
      }).replace('${OPENAI_API_KEY}', key);
    writeFileSync(configPath, config('sk-one'));
    upstream.options = { apiKeys: ['sk-one'] };
    onTestFinished(() => {
      upstream.options = {};
    });
    const created: string[] = [];
    expect(await runCli(['tokens', 'create', '--team', 'ops', '--config', configPath], { stdout: (line) => created.push(line), stderr: () => undefined })).toBe(
      0,
    );
    const token = created.at(-1) as string;
    const child = spawn(process.execPath, [BIN, 'serve', '--config', configPath], { stdio: ['ignore', 'pipe', 'ignore'] });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    onTestFinished(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    const lines: Array<Record<string, unknown>> = [];
    const waiters: Array<{ match: (line: Record<string, unknown>) => boolean; resolve: (line: Record<string, unknown>) => void }> = [];
    createInterface({ input: child.stdout }).on('line', (text) => {
      const line = JSON.parse(text) as Record<string, unknown>;
      lines.push(line);
      for (const waiter of waiters.filter((candidate) => candidate.match(line))) waiter.resolve(line);
    });
    const next = (match: (line: Record<string, unknown>) => boolean) => new Promise<Record<string, unknown>>((resolve) => waiters.push({ match, resolve }));
    const url = (await next((line) => typeof line['url'] === 'string'))['url'] as string;
    expect(await chat(url, token, 'gpt-4o-mini')).toEqual({ status: 200, key: 'sk-one' });

    writeFileSync(configPath, config('sk-two'));
    upstream.options = { apiKeys: ['sk-two'] };
    const reloaded = next((line) => typeof line['msg'] === 'string' && line['msg'].startsWith('config reload'));
    const said: string[] = [];
    expect(await runCli(['reload', '--config', configPath], { stdout: (line) => said.push(line), stderr: (line) => said.push(line) })).toBe(0);
    expect(said.join('\n')).toContain(`sent SIGHUP to switchyard (pid ${child.pid})`);
    expect((await reloaded)['msg']).toBe('config reloaded: upstreams[0].api_key changed');
    expect(await chat(url, token, 'gpt-4o-mini')).toEqual({ status: 200, key: 'sk-two' });

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(JSON.stringify(lines)).not.toMatch(/sk-one|sk-two/);
  });
});
