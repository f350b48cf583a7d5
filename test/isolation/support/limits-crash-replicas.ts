import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';

const BIN = fileURLToPath(new URL('../../../bin/switchyard.js', import.meta.url));

/** One `switchyard serve` process of the limits-crash suite: its URL, and a way to kill it as a crash would. */
export class Replica {
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
  ) {}

  /** Starts `switchyard serve --config <path>` and resolves once it listens. */
  static async start(configPath: string): Promise<Replica> {
    const child = spawn(process.execPath, [BIN, 'serve', '--config', configPath], { stdio: ['ignore', 'pipe', 'ignore'] });
    const url = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
        try {
          const entry = JSON.parse(line) as Record<string, unknown>;
          if (typeof entry['url'] === 'string') resolve(entry['url']);
        } catch {
          // Not a log line of ours.
        }
      });
      child.once('exit', (code) => reject(new Error(`switchyard serve exited with ${code} before listening`)));
    });
    // Its stdout must keep draining, or a busy gateway's access log would block it.
    child.stdout?.resume();
    return new Replica(child, url);
  }

  /** SIGKILL: nothing of the process runs after it (no settlement, no flush). Resolves once it is gone. */
  async crash(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGKILL');
    await exited;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  }
}

/** What the suite looks at in an answer. */
export interface Answer {
  status: number;
  /** The error's code (a 429's `rate_limit_exceeded` or `quota_exceeded`); null for a 200. */
  code: string | null;
  requestId: string | null;
  /** Whether the limits were counted in the shared state: only a counted admission carries the rpm headers. */
  counted: boolean;
}

/** A chat completion through a replica, of `model` (the suite's fast or slow one). */
export async function chat(url: string, token: string, model = 'fast'): Promise<Answer> {
  const response = await request(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hi' }] }),
  });
  const text = await response.body.text();
  let code: string | null = null;
  if (response.statusCode !== 200) {
    try {
      code = (JSON.parse(text) as { error?: { code?: string } }).error?.code ?? null;
    } catch {
      code = null;
    }
  }
  const requestId = response.headers['x-request-id'];
  return {
    status: response.statusCode,
    code,
    requestId: typeof requestId === 'string' ? requestId : null,
    counted: response.headers['x-ratelimit-limit-requests'] !== undefined,
  };
}

/**
 * Polls each URL with a request until one is admitted, and counted in the shared state, on every
 * one of them (each request ends at once, so it holds no slot after it is answered); resolves to
 * the milliseconds that took, or to null when `withinMs` passed first. The token's holder needs an
 * `rpm` limit: a replica that cannot reach the state lets requests through uncounted, and only
 * the rpm headers tell the two apart.
 */
export async function admittedEverywhereWithin(urls: readonly string[], token: string, withinMs: number): Promise<number | null> {
  const started = performance.now();
  const pending = new Set(urls);
  while (pending.size > 0) {
    for (const url of [...pending]) {
      const answer = await chat(url, token);
      if (answer.status === 200 && answer.counted) pending.delete(url);
    }
    if (pending.size === 0) break;
    if (performance.now() - started > withinMs) return null;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return performance.now() - started;
}
