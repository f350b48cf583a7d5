import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { TokenService } from '../../src/access/index.js';
import { openStores } from '../../src/store/index.js';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../fake-upstreams/openai-upstream.js';

const BIN = fileURLToPath(new URL('../../bin/switchyard.js', import.meta.url));
const REDIS_URL = process.env.TEST_REDIS_URL;

/**
 * Two `switchyard serve` processes over one Redis and one database: together they let through
 * exactly a token's requests per minute and requests in flight, however the requests are spread.
 */
describe.skipIf(!REDIS_URL)('caller limits across two gateway processes sharing Redis', () => {
  const keyPrefix = `switchyard-test:${randomBytes(6).toString('hex')}:`;
  let upstream: FakeOpenAIUpstream;
  let directory: string;
  let configPath: string;
  const children: ChildProcess[] = [];
  const urls: string[] = [];

  beforeAll(async () => {
    upstream = await startFakeOpenAIUpstream();
    directory = mkdtempSync(join(tmpdir(), 'switchyard-limits-replicas-'));
    configPath = join(directory, 'switchyard.yaml');
    writeFileSync(
      configPath,
      stringify({
        server: { host: '127.0.0.1', port: 0 },
        database: { url: `sqlite:${join(directory, 'switchyard.db')}` },
        state: { url: REDIS_URL, key_prefix: keyPrefix },
        request_log: { flush_interval_ms: 50 },
        upstreams: [{ id: 'primary', provider: 'openai', base_url: upstream.url, api_key: 'sk-upstream' }],
        models: [{ id: 'gpt-4o-mini', type: 'chat', routes: [{ upstream: 'primary', model: 'gpt-4o-mini' }] }],
      }),
    );
    for (let index = 0; index < 2; index++) {
      const child = spawn(process.execPath, [BIN, 'serve', '--config', configPath], { stdio: ['ignore', 'pipe', 'ignore'] });
      children.push(child);
      urls.push(
        await new Promise<string>((resolve, reject) => {
          createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
            const entry = JSON.parse(line) as Record<string, unknown>;
            if (typeof entry['url'] === 'string') resolve(entry['url']);
          });
          child.once('exit', (code) => reject(new Error(`switchyard serve exited with ${code} before listening`)));
        }),
      );
    }
  });

  afterAll(async () => {
    await Promise.all(
      children.map((child) => new Promise((resolve) => (child.exitCode !== null ? resolve(null) : (child.once('exit', resolve), child.kill('SIGTERM'))))),
    );
    await upstream?.close();
    rmSync(directory, { recursive: true, force: true });
    await deleteStateKeys();
  });

  async function createToken(limits: { rpm?: number; maxConcurrent?: number; tokensPerDay?: number }): Promise<string> {
    const stores = await openStores(`sqlite:${join(directory, 'switchyard.db')}`);
    try {
      return (await new TokenService(stores.tokens, 'svc_').create({ team: `replicas-${randomBytes(3).toString('hex')}`, limits })).secret;
    } finally {
      await stores.close();
    }
  }

  async function deleteStateKeys(): Promise<void> {
    const redis = new Redis(REDIS_URL as string);
    try {
      const keys = await redis.keys(`${keyPrefix}*`);
      if (keys.length > 0) await redis.del(...keys);
    } finally {
      await redis.quit();
    }
  }

  const post = async (url: string, token: string): Promise<number> => {
    const response = await request(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }),
    });
    await response.body.text();
    return response.statusCode;
  };

  it('rpm 25: of 60 concurrent requests spread over both processes, exactly 25 pass', async () => {
    const token = await createToken({ rpm: 25 });
    // Not across a minute's boundary: the window would start over in the middle.
    if (Date.now() % 60_000 > 55_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - (Date.now() % 60_000) + 50));
    const statuses = await Promise.all(Array.from({ length: 60 }, (_, index) => post(urls[index % 2] as string, token)));
    expect(statuses.filter((status) => status === 200)).toHaveLength(25);
    expect(statuses.filter((status) => status === 429)).toHaveLength(35);
  });

  it('max_concurrent 4: of 20 slow concurrent requests over both processes, exactly 4 are in flight and pass', async () => {
    const token = await createToken({ maxConcurrent: 4 });
    upstream.options = { firstByteDelayMs: 1_000 };
    try {
      const statuses = await Promise.all(Array.from({ length: 20 }, (_, index) => post(urls[index % 2] as string, token)));
      expect(statuses.filter((status) => status === 200)).toHaveLength(4);
      expect(statuses.filter((status) => status === 429)).toHaveLength(16);
    } finally {
      upstream.options = {};
    }
  });

  it('a Redis that lost every counter does not hand out a fresh day: the quota is rebuilt from the request log', async () => {
    // Each answer of the fake upstream uses 17 tokens.
    const token = await createToken({ tokensPerDay: 30 });
    expect(await post(urls[0] as string, token)).toBe(200);
    expect(await post(urls[1] as string, token)).toBe(200);
    expect(await post(urls[0] as string, token)).toBe(429);
    // The rows are written within the log's flush interval; then Redis restarts empty.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await deleteStateKeys();
    expect(await post(urls[1] as string, token)).toBe(429);
    expect(await post(urls[0] as string, token)).toBe(429);
  });
});
