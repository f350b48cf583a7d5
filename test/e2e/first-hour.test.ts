import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { findPocketsphinx } from '../../src/providers/local/transcription/find-pocketsphinx.js';
import { cli } from '../support/run-cli.js';
import { startOpenAIFakeGateway, type OpenAIFakeGateway } from '../support/start-openai-fake-gateway.js';

/** What a new user meets in the first hour, before any feature: each was a trip-up once. */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let harness: OpenAIFakeGateway;
let token: string;
beforeAll(async () => {
  harness = await startOpenAIFakeGateway();
  token = await harness.createToken();
});
afterAll(async () => {
  await harness.close();
});

async function get(path: string, authorization = `Bearer ${token}`): Promise<{ status: number; body: { error?: { code: string; message: string } } }> {
  const response = await request(`${harness.gateway.url}${path}`, { headers: { authorization } });
  return { status: response.statusCode, body: (await response.body.json()) as { error?: { code: string; message: string } } };
}

describe('the command line', () => {
  it('prints its version with --version and -v', async () => {
    const { version } = (await import('../../package.json', { with: { type: 'json' } })).default as { version: string };
    for (const flag of ['--version', '-v']) {
      const answer = await cli(flag);
      expect(answer.code).toBe(0);
      expect(answer.stdout).toEqual([version]);
    }
  });

  it('lists the valid scopes when --scopes names an unknown one', async () => {
    const answer = await cli('tokens', 'create', '--team', 't', '--scopes', 'chat,fly', '--config', harness.configPath);
    expect(answer.code).toBe(64);
    expect(answer.stderr.join('\n')).toContain(
      'unknown scope fly (valid scopes: models:read, chat, native, embeddings, rerank, audio:transcribe, audio:speak, admin, metrics)',
    );
  });

  it('tokens commands print the database they used, on stderr', async () => {
    for (const argv of [
      ['tokens', 'list'],
      ['tokens', 'create', '--team', 't'],
    ]) {
      const answer = await cli(...argv, '--config', harness.configPath);
      expect(answer.code).toBe(0);
      expect(answer.stderr[0]).toBe(`database: sqlite:${harness.directory}/switchyard.db (config: ${harness.configPath})`);
    }
  });

  it('says which setting changes the port when it is taken', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as { port: number };
    const directory = mkdtempSync(join(tmpdir(), 'switchyard-port-'));
    try {
      const configPath = join(directory, 'switchyard.yaml');
      writeFileSync(
        configPath,
        stringify({ server: { host: '127.0.0.1', port }, database: { url: `sqlite:${join(directory, 'db')}` }, logging: { level: 'silent' } }),
      );
      const answer = await cli('serve', '--config', configPath);
      expect(answer.code).toBe(1);
      expect(answer.stderr).toEqual([
        `switchyard: 127.0.0.1:${port} is already in use; choose another port with server.port in the config or SWITCHYARD_PORT (0 picks a free one)`,
      ]);
    } finally {
      blocker.close();
      rmSync(directory, { recursive: true, force: true });
    }
  });
});

describe('the API', () => {
  it('answers GET /v1/models/ (no id) with 404 route_not_found, not a model named ""', async () => {
    const answer = await get('/v1/models/');
    expect(answer.status).toBe(404);
    expect(answer.body.error?.code).toBe('route_not_found');
  });

  it('describes a malformed token truly: svc_wrong does start with svc_', async () => {
    const answer = await get('/v1/models', 'Bearer svc_wrong');
    expect(answer.status).toBe(401);
    expect(answer.body.error?.message).toBe('Malformed API key: a gateway token is "svc_" followed by 43 letters and digits.');
  });

  it('answers an unknown model with up to 10 models of its type the token may use', async () => {
    const answer = await request(`${harness.gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-5-turbo', messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(answer.statusCode).toBe(404);
    expect(((await answer.body.json()) as { error: { message: string } }).error.message).toBe(
      "The model 'gpt-5-turbo' does not exist. Chat models this API key may use: gpt-4o-mini, pooled-chat, slow-chat, unreachable-chat.",
    );
  });

  it('says how to add a chat model when the token may use none', async () => {
    const embedOnly = await harness.createToken({ models: ['text-embedding-3-small'] });
    const answer = await request(`${harness.gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${embedOnly}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'llama', messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(answer.statusCode).toBe(404);
    expect(((await answer.body.json()) as { error: { message: string } }).error.message).toContain(
      'drop a GGUF file into ./models/ or add an upstream and a chat model to the config',
    );
  });

  it('says "an embedding model"', async () => {
    const response = await request(`${harness.gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'text-embedding-3-small', messages: [{ role: 'user', content: 'Hi' }] }),
    });
    const body = (await response.body.json()) as { error: { message: string } };
    expect(body.error.message).toBe("The model 'text-embedding-3-small' is an embedding model; call /v1/embeddings with it.");
  });
});

describe('npm start', () => {
  it('stops the gateway when npm is sent SIGTERM, leaving no gateway process behind', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'switchyard-npm-start-'));
    const configPath = join(directory, 'switchyard.yaml');
    writeFileSync(
      configPath,
      stringify({ server: { host: '127.0.0.1', port: 0 }, database: { url: `sqlite:${join(directory, 'db')}` }, upstreams: [], models: [] }),
    );
    const npm = spawn('npm', ['start', '--silent'], { cwd: ROOT, env: { ...process.env, SWITCHYARD_CONFIG: configPath }, stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        createInterface({ input: npm.stdout }).on('line', (line) => {
          const entry = JSON.parse(line) as { url?: string };
          if (entry.url !== undefined) resolve(entry.url);
        });
        npm.once('exit', (code) => reject(new Error(`npm start exited with ${code}`)));
      });
      expect((await request(`${url}/health`)).statusCode).toBe(200);
      npm.kill('SIGTERM');
      // The gateway drains and exits; a gateway orphaned by npm would go on answering.
      let stopped = false;
      for (let attempt = 0; attempt < 40 && !stopped; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        stopped = await request(`${url}/health`).then(
          async (response) => {
            await response.body.text();
            return false;
          },
          () => true,
        );
      }
      expect(stopped).toBe(true);
    } finally {
      npm.kill('SIGKILL');
      rmSync(directory, { recursive: true, force: true });
    }
  });
});

/** `switchyard serve` on built-in defaults (no config: the local provider) in an empty folder, until its banner is out. */
async function startFresh(path: string): Promise<{ banner: string; stdout: string[]; stop(): Promise<void> }> {
  const directory = mkdtempSync(join(tmpdir(), 'switchyard-fresh-'));
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SWITCHYARD_')));
  const gateway = spawn(process.execPath, [join(ROOT, 'bin', 'switchyard.js'), 'serve'], {
    cwd: directory,
    env: { ...env, PATH: path, SWITCHYARD_PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  createInterface({ input: gateway.stdout }).on('line', (line) => stdout.push(line));
  let stderr = '';
  const banner = await new Promise<string>((resolve, reject) => {
    gateway.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (/\n\n$|admin token: \S+\n/.test(stderr) && stderr.includes('listening on')) resolve(stderr);
    });
    gateway.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
  });
  return {
    banner,
    stdout,
    async stop() {
      const exited = new Promise((resolve) => gateway.once('exit', resolve));
      gateway.kill('SIGTERM');
      await exited;
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

describe('the start-up banner', () => {
  it('says local-transcribe is off when pocketsphinx is not on the search path, and the command that turns it on', async () => {
    // Only the folder of node itself: pocketsphinx_continuous cannot be found, installed or not.
    const fresh = await startFresh(dirname(process.execPath));
    try {
      expect(fresh.banner).toMatch(/models: +local-embed \(embedding\), local-rerank \(rerank\), local-speech \(speech\)\n/);
      expect(fresh.banner).toContain(
        '  off:             local-transcribe (transcription): pocketsphinx is not installed; to turn it on: sudo apt-get install pocketsphinx pocketsphinx-en-us, then restart the gateway\n',
      );
      // The log is written asynchronously: the line may follow the banner by a moment.
      let warning: { level: number; msg: string; model?: string } | undefined;
      for (let attempt = 0; attempt < 100 && warning === undefined; attempt++) {
        warning = fresh.stdout
          .map((line) => JSON.parse(line) as { level: number; msg: string; model?: string })
          .find((entry) => entry.model === 'local-transcribe');
        if (warning === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(warning).toMatchObject({ level: 40, msg: 'local-transcribe is off: pocketsphinx is not installed' });
    } finally {
      await fresh.stop();
    }
  });

  it.skipIf(findPocketsphinx() === null)('serves local-transcribe and says nothing is off when pocketsphinx is installed', async () => {
    const fresh = await startFresh(process.env['PATH'] ?? '');
    try {
      expect(fresh.banner).toMatch(/models: .*local-transcribe \(transcription\)/);
      expect(fresh.banner).not.toContain('off:');
    } finally {
      await fresh.stop();
    }
  });
});
