import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { runCli } from '../../src/cli/main.js';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';
import { startStoredResponsesUpstream, type StoredResponsesUpstream } from './support/stored-responses-upstream.js';

// Issue 29, item 1: every converted /v1/responses answer was stored whole for 24 h, each turn of a
// chained conversation again with all the turns before it, with no bound. These suites send what
// killed the gateway (many multi-megabyte requests from one team) and check the bounds that now hold.

const BIN = fileURLToPath(new URL('../../bin/switchyard.js', import.meta.url));
const MiB = 1024 * 1024;
const REDIS_URL = process.env.TEST_REDIS_URL;

let upstream: StoredResponsesUpstream;
beforeAll(async () => {
  upstream = await startStoredResponsesUpstream();
});
afterAll(async () => upstream?.close());

function upstreamConfig(url: string): { upstreams: unknown[]; models: unknown[] } {
  // Azure converts /v1/responses to chat completions, as every non-openai upstream does.
  return {
    upstreams: [{ id: 'chat', provider: 'azure', base_url: url, api_key: 'azure-key', api_version: '2024-10-21' }],
    models: [{ id: 'chat', type: 'chat', routes: [{ upstream: 'chat', model: 'chat' }] }],
  };
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function createResponse(url: string, token: string, body: Record<string, unknown>): Promise<Answer> {
  const response = await request(`${url}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'chat', ...body }),
    headersTimeout: 15_000,
    bodyTimeout: 15_000,
  });
  return { status: response.statusCode, body: (await response.body.json()) as Record<string, unknown> };
}

/** A user message of `bytes` characters that JSON carries as is. */
function bigInput(bytes: number, tag: string): string {
  return `${tag} ${'x'.repeat(bytes)}`;
}

/** The kernel's figures for a process, in MiB: resident now and the peak. */
function residentMiB(pid: number): { now: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) / 1024;
  return { now: field('VmRSS'), peak: field('VmHWM') };
}

describe('stored responses in memory, one team flooding a gateway process with a small heap', () => {
  let directory: string;
  let child: ChildProcess | undefined;

  afterAll(() => {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
  });

  it('keeps the heap bounded, keeps serving the team’s newest conversation and another team, and refuses an evicted one by its code', async () => {
    directory = mkdtempSync(join(tmpdir(), 'switchyard-stored-responses-'));
    const configPath = join(directory, 'switchyard.yaml');
    writeFileSync(
      configPath,
      stringify({
        server: { host: '127.0.0.1', port: 0 },
        database: { url: `sqlite:${join(directory, 'switchyard.db')}` },
        state: { url: 'memory' },
        responses: { max_bytes: 16 * MiB, max_bytes_per_team: 8 * MiB },
        ...upstreamConfig(upstream.url),
      }),
    );
    const tokenOf = async (team: string): Promise<string> => {
      const lines: string[] = [];
      expect(await runCli(['tokens', 'create', '--team', team, '--config', configPath], { stdout: (line) => lines.push(line), stderr: () => undefined })).toBe(
        0,
      );
      return lines.at(-1) as string;
    };
    const attacker = await tokenOf('flood');
    const bystander = await tokenOf('bystander');

    // 96 MiB of heap: the old store kept every 4 MiB request whole, so it ran out after a couple of dozen.
    const gateway = spawn(process.execPath, ['--max-old-space-size=96', BIN, 'serve', '--config', configPath], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = gateway;
    let stderr = '';
    gateway.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-2_000);
    });
    const url = await new Promise<string>((resolve, reject) => {
      createInterface({ input: gateway.stdout as NodeJS.ReadableStream }).on('line', (line) => {
        const entry = JSON.parse(line) as Record<string, unknown>;
        if (typeof entry['url'] === 'string') resolve(entry['url']);
      });
      gateway.once('exit', (code) => reject(new Error(`switchyard serve exited with ${code} before listening`)));
    });
    const pid = gateway.pid as number;

    const REQUESTS = 40;
    const first = await createResponse(url, bystander, { input: 'Remember the number 7.' });
    expect(first.status).toBe(200);
    let previous: string | null = null;
    let oldest: string | null = null;
    let peakDuringFlood = 0;
    for (let index = 0; index < REQUESTS; index += 1) {
      if (gateway.exitCode !== null || gateway.signalCode !== null) break;
      const answer = await createResponse(url, attacker, { input: bigInput(4 * MiB, `request ${index}`) }).catch((error: unknown) => {
        throw new Error(`request ${index} failed: ${String(error)}; the gateway said: ${stderr}`);
      });
      expect(answer.status, JSON.stringify(answer.body).slice(0, 300)).toBe(200);
      oldest ??= answer.body['id'] as string;
      previous = answer.body['id'] as string;
      peakDuringFlood = Math.max(peakDuringFlood, residentMiB(pid).now);
    }
    expect(gateway.exitCode, stderr).toBeNull();
    expect(gateway.signalCode, stderr).toBeNull();
    const { peak } = residentMiB(pid);
    console.info(
      `stored responses: ${REQUESTS} requests of 4 MiB from one team; gateway resident peak ${peak.toFixed(0)} MiB (max seen ${peakDuringFlood.toFixed(0)} MiB)`,
    );
    // 160 MiB went into the store, with 96 MiB of heap: the old store ran out of heap at the 17th
    // request. Now it keeps 8 MiB of the team's (16 MiB in all) and the process stays where a few
    // requests in flight put it (about 200 MiB resident, most of it the runtime and request buffers).
    expect(peak).toBeLessThan(256);

    // The team's newest response still continues; its oldest was pushed out, and is refused by a stable code.
    const continued = await createResponse(url, attacker, { previous_response_id: previous, input: 'And now?' });
    expect(continued.status).toBe(200);
    const evicted = await createResponse(url, attacker, { previous_response_id: oldest, input: 'And now?' });
    expect(evicted.status).toBe(400);
    expect(evicted.body).toMatchObject({ error: { code: 'previous_response_not_found', param: 'previous_response_id' } });

    // The other team's conversation, stored before the flood, was never touched by it.
    const bystanderTurn = await createResponse(url, bystander, { previous_response_id: first.body['id'], input: 'Which number?' });
    expect(bystanderTurn.status).toBe(200);

    gateway.kill('SIGTERM');
    expect(await new Promise<number | null>((resolve) => gateway.once('exit', resolve))).toBe(0);
  }, 60_000);
});

describe.skipIf(!REDIS_URL)('stored responses in Redis', () => {
  const prefix = `switchyard-test:stored-responses:${randomBytes(6).toString('hex')}:`;
  let admin: Redis;
  let gateway: TestGateway;

  beforeAll(async () => {
    admin = new Redis(REDIS_URL ?? '', { maxRetriesPerRequest: 0 });
    gateway = await startTestGateway({
      state: { url: REDIS_URL, key_prefix: prefix },
      responses: { max_bytes: 3 * MiB, max_bytes_per_team: 2 * MiB },
      ...upstreamConfig(upstream.url),
    });
  });
  afterAll(async () => {
    await gateway?.close();
    if (admin !== undefined) {
      for await (const batch of admin.scanStream({ match: `${prefix}*`, count: 1_000 })) {
        const keys = batch as string[];
        if (keys.length > 0) await admin.unlink(...keys);
      }
      await admin.quit();
    }
  });

  /** The bytes of the stored responses and items under `pattern` (the values the budget counts). */
  async function storedBytes(pattern = `${prefix}value:response*`): Promise<number> {
    let total = 0;
    for await (const batch of admin.scanStream({ match: pattern, count: 1_000 })) {
      for (const key of batch as string[]) total += await admin.strlen(key);
    }
    return total;
  }

  /** What every key under the prefix takes in Redis (MEMORY USAGE: the allocator's size classes and Redis's own bookkeeping included). */
  async function redisBytes(): Promise<number> {
    let total = 0;
    for await (const batch of admin.scanStream({ match: `${prefix}*`, count: 1_000 })) {
      for (const key of batch as string[]) total += (await admin.memory('USAGE', key)) ?? 0;
    }
    return total;
  }

  it('keeps what the stored responses take under responses.max_bytes, and another team’s requests succeed', async () => {
    const other = (await gateway.gateway.tokens.create({ team: 'other' })).secret;
    for (let index = 0; index < 10; index += 1) {
      const answer = await createResponse(gateway.gateway.url, gateway.token, { input: bigInput(MiB, `request ${index}`) });
      expect(answer.status).toBe(200);
    }
    const afterFlood = await storedBytes();
    console.info(
      `stored responses in Redis: 10 requests of 1 MiB from one team store ${(afterFlood / MiB).toFixed(2)} MiB, Redis holds ${((await redisBytes()) / MiB).toFixed(2)} MiB for them (budget per team 2 MiB, total 3 MiB)`,
    );
    expect(afterFlood).toBeLessThanOrEqual(2 * MiB);

    const ids: string[] = [];
    for (let index = 0; index < 4; index += 1) {
      const answer = await createResponse(gateway.gateway.url, other, { input: bigInput(512 * 1024, `other ${index}`) });
      expect(answer.status).toBe(200);
      ids.push(answer.body['id'] as string);
    }
    expect((await createResponse(gateway.gateway.url, other, { previous_response_id: ids.at(-1), input: 'Go on.' })).status).toBe(200);
    expect(await storedBytes()).toBeLessThanOrEqual(3 * MiB);
    // What Redis really spends on them: a 1 MiB string takes a 1.25 MiB allocation, and the budget's own bookkeeping a few hundred bytes per entry.
    expect(await redisBytes()).toBeLessThan(1.3 * 3 * MiB);
  });

  it('stores a chained conversation of N turns once: O(N) bytes, not O(N²)', async () => {
    const token = (await gateway.gateway.tokens.create({ team: 'chain' })).secret;
    const TURNS = 12;
    const TURN_BYTES = 64 * 1024;
    let previous: string | undefined;
    for (let turn = 0; turn < TURNS; turn += 1) {
      const answer = await createResponse(gateway.gateway.url, token, {
        input: bigInput(TURN_BYTES, `turn ${turn}`),
        ...(previous === undefined ? {} : { previous_response_id: previous }),
      });
      expect(answer.status).toBe(200);
      previous = answer.body['id'] as string;
    }
    // The last turn was sent the whole conversation: every turn's input, resolved from the store.
    expect(upstream.lastBodyBytes()).toBeGreaterThan(TURNS * TURN_BYTES);
    const stored = await storedBytes(`${prefix}value:response:5:chain*`);
    console.info(`stored responses: a chain of ${TURNS} turns of ${TURN_BYTES / 1024} KiB holds ${(stored / 1024).toFixed(0)} KiB`);
    // Once: about TURNS × TURN_BYTES. Whole at every turn it was TURNS × (TURNS + 1) / 2 × TURN_BYTES, 6.5 times that.
    expect(stored).toBeLessThan(1.5 * TURNS * TURN_BYTES);
  });
});
