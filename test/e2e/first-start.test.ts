import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../../bin/switchyard.js', import.meta.url));
const directory = mkdtempSync(join(tmpdir(), 'switchyard-first-start-'));

// A failed assertion skips a test's own stop(); no gateway may outlive the suite.
const started = new Set<ReturnType<typeof spawn>>();

afterAll(() => {
  for (const child of started) child.kill('SIGKILL');
  rmSync(directory, { recursive: true, force: true });
});

/** `switchyard serve` in an empty directory with no config; resolves with what its banner said. */
async function serveFresh(): Promise<{ url: string; token: string | null; stderr: string[]; stop(): Promise<number | null> }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SWITCHYARD_')));
  const child = spawn(process.execPath, [BIN, 'serve'], { cwd: directory, env: { ...env, SWITCHYARD_PORT: '0' }, stdio: ['ignore', 'ignore', 'pipe'] });
  started.add(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  void exited.then(() => started.delete(child));
  const stderr: string[] = [];
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stderr as NodeJS.ReadableStream }).on('line', (line) => {
      stderr.push(line);
      // The banner ends with an empty line after the models (and the token, on a first start).
      if (line === '' && stderr.some((seen) => seen.includes('models:'))) resolve();
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${stderr.join('\n')}`)));
  });
  const url = /listening on (\S+)/.exec(stderr.join('\n'))?.[1] as string;
  const token = /admin token: (\S+)/.exec(stderr.join('\n'))?.[1] ?? null;
  return {
    url,
    token,
    stderr,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

describe('a fresh install with no config', () => {
  it('starts with the local models, prints a banner with an admin token once, keeps its data under ./data, and the token works', async () => {
    const first = await serveFresh();
    expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(first.stderr.join('\n')).toContain('built-in defaults');
    expect(first.token).toMatch(/^svc_[A-Za-z0-9]{43}$/);
    expect(first.stderr.join('\n')).toMatch(/models: .*local-speech \(speech\)/);
    const client = new OpenAI({ apiKey: first.token as string, baseURL: `${first.url}/v1`, maxRetries: 0 });
    const models = (await client.models.list()).data.map((model) => model.id);
    expect(models).toEqual(expect.arrayContaining(['local-embed', 'local-rerank', 'local-speech']));
    // The built-in provider answers for real: Flite-made audio, in the format asked for.
    const speech = await client.audio.speech.create({ model: 'local-speech', input: 'Hello from a fresh install.', voice: 'alloy', response_format: 'wav' });
    expect(speech.headers.get('content-type')).toBe('audio/wav');
    expect(
      Buffer.from(await speech.arrayBuffer())
        .subarray(0, 4)
        .toString('latin1'),
    ).toBe('RIFF');
    expect(await first.stop()).toBe(0);
    expect(existsSync(join(directory, 'data', 'switchyard.db'))).toBe(true);

    const second = await serveFresh();
    expect(second.token).toBeNull();
    expect(second.stderr.join('\n')).not.toContain('admin token');
    // The first token still works: it was stored, not printed and forgotten.
    const again = new OpenAI({ apiKey: first.token as string, baseURL: `${second.url}/v1`, maxRetries: 0 });
    expect((await again.models.list()).data.map((model) => model.id)).toEqual(models);
    expect(await second.stop()).toBe(0);
  });
});
