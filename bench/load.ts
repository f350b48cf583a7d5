import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Agent, Pool, request } from 'undici';
import { rssBytes } from './process-stats.js';
import { CHAT_PATH, type Target } from './targets.js';

const run = promisify(execFile);
export const LOAD_CORE = '0';

export function chatBody(stream: boolean, model = 'bench-model'): string {
  return JSON.stringify({ model, messages: [{ role: 'user', content: 'Say hello in one short paragraph.' }], max_tokens: 64, ...(stream ? { stream: true } : {}) });
}

export interface WrkResult {
  requestsPerSecond: number;
  requests: number;
  p50Ms: number;
  p99Ms: number;
  failures: number;
}

/** Closed-loop load from wrk (C, one thread, pinned to the load core). */
export async function wrk(target: Target, connections: number, seconds: number, workDirectory: string): Promise<WrkResult> {
  const script = join(workDirectory, `${target.name}.lua`);
  const headers = { 'content-type': 'application/json', ...target.headers };
  writeFileSync(
    script,
    `wrk.method = "POST"\nwrk.body = ${JSON.stringify(chatBody(false))}\n${Object.entries(headers)
      .map(([name, value]) => `wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`)
      .join('\n')}\n`,
  );
  const { stdout } = await run('taskset', ['-c', LOAD_CORE, 'wrk', '-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '-s', script, `${target.origin}${CHAT_PATH}`], {
    maxBuffer: 1 << 20,
  });
  const number = (pattern: RegExp) => Number(pattern.exec(stdout)?.[1] ?? Number.NaN);
  return {
    requestsPerSecond: number(/Requests\/sec:\s+([\d.]+)/),
    requests: number(/(\d+) requests in/),
    p50Ms: duration(/\s50%\s+([\d.]+\w+)/.exec(stdout)?.[1]),
    p99Ms: duration(/\s99%\s+([\d.]+\w+)/.exec(stdout)?.[1]),
    failures: (number(/Non-2xx or 3xx responses: (\d+)/) || 0) + socketErrors(stdout),
  };
}

function socketErrors(output: string): number {
  const match = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  return match === null ? 0 : match.slice(1).reduce((sum, value) => sum + Number(value), 0);
}

function duration(text: string | undefined): number {
  if (text === undefined) return Number.NaN;
  const match = /([\d.]+)(us|ms|s|m)/.exec(text);
  if (match === null) return Number.NaN;
  const value = Number(match[1]);
  return match[2] === 'us' ? value / 1000 : match[2] === 'ms' ? value : match[2] === 's' ? value * 1000 : value * 60_000;
}

export interface OpenLoopResult {
  p50Ms: number;
  p99Ms: number;
  completed: number;
  failed: number;
}

/** One keep-alive pool per target for every open-loop run, as a real client keeps its connections. */
export function openLoopPool(target: Target): Pool {
  return new Pool(target.origin, { connections: 256, pipelining: 1, keepAliveTimeout: 60_000 });
}

/**
 * Open-loop load: requests leave on a fixed schedule whatever the answers do, and latency is
 * counted from the scheduled time, so a stalled server shows as the queueing it causes
 * (no coordinated omission).
 */
export async function openLoop(target: Target, rate: number, seconds: number, pool: Pool): Promise<OpenLoopResult> {
  const body = chatBody(false);
  const headers = { 'content-type': 'application/json', ...target.headers };
  const total = Math.round(rate * seconds);
  const latencies: number[] = [];
  let failed = 0;
  const inFlight: Promise<void>[] = [];
  const start = performance.now();
  let sent = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      while (sent < total && start + (sent * 1000) / rate <= now) {
        const scheduled = start + (sent * 1000) / rate;
        sent++;
        inFlight.push(
          pool
            .request({ path: CHAT_PATH, method: 'POST', headers, body })
            .then(async (response) => {
              await response.body.dump();
              if (response.statusCode === 200) latencies.push(performance.now() - scheduled);
              else failed++;
            })
            .catch(() => {
              failed++;
            }),
        );
      }
      if (sent < total) setImmediate(tick);
      else resolve();
    };
    tick();
  });
  await Promise.all(inFlight);
  latencies.sort((a, b) => a - b);
  return { p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99), completed: latencies.length, failed };
}

export interface StreamProbeResult {
  firstByteMs: number;
  totalMs: number;
}

/** One streamed request at a time: median time to the first body byte and to the end. */
export async function streamProbe(target: Target, count: number): Promise<StreamProbeResult> {
  const pool = new Pool(target.origin, { connections: 1 });
  const headers = { 'content-type': 'application/json', ...target.headers };
  const body = chatBody(true);
  const firstBytes: number[] = [];
  const totals: number[] = [];
  for (let index = 0; index < count; index++) {
    const start = performance.now();
    const response = await pool.request({ path: CHAT_PATH, method: 'POST', headers, body });
    let first = 0;
    for await (const _chunk of response.body) if (first === 0) first = performance.now() - start;
    if (response.statusCode === 200) {
      firstBytes.push(first);
      totals.push(performance.now() - start);
    }
  }
  await pool.close();
  return { firstByteMs: median(firstBytes), totalMs: median(totals) };
}

export interface ConcurrentStreamsResult {
  idleRssBytes: number;
  peakRssBytes: number;
  bytesPerStream: number;
  completed: number;
}

/** Holds `count` slow streams open at once and watches the target's memory. */
export async function concurrentStreams(target: Target, count: number): Promise<ConcurrentStreamsResult> {
  const agent = new Agent({ connections: count + 16, keepAliveTimeout: 30_000, bodyTimeout: 120_000, headersTimeout: 120_000 });
  const headers = { 'content-type': 'application/json', ...target.headers };
  const body = chatBody(true, target.name === 'switchyard' ? 'bench-model-slow' : 'slow-stream');
  await new Promise((resolve) => setTimeout(resolve, 500));
  const idleRssBytes = rssBytes(target.pid);
  let peakRssBytes = idleRssBytes;
  const sampler = setInterval(() => {
    peakRssBytes = Math.max(peakRssBytes, rssBytes(target.pid));
  }, 200);
  let completed = 0;
  await Promise.all(
    Array.from({ length: count }, async () => {
      try {
        const response = await request(`${target.origin}${CHAT_PATH}`, { method: 'POST', headers, body, dispatcher: agent });
        const text = await response.body.text();
        if (response.statusCode === 200 && text.includes('[DONE]')) completed++;
      } catch {
        // Counted as not completed.
      }
    }),
  );
  clearInterval(sampler);
  await agent.close();
  return { idleRssBytes, peakRssBytes, bytesPerStream: (peakRssBytes - idleRssBytes) / count, completed };
}

export function median(values: number[]): number {
  return percentile([...values].sort((a, b) => a - b), 0.5);
}

function percentile(sorted: number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] as number;
}
