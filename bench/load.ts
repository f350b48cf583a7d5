import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Agent, Client, Pool, request, type Dispatcher } from 'undici';
import { rssBytes } from './process-stats.js';
import { CHAT_PATH, type Target } from './targets.js';

const run = promisify(execFile);
export const LOAD_CORE = '0';

export function chatBody(stream: boolean, model = 'bench-model'): string {
  return JSON.stringify({
    model,
    messages: [{ role: 'user', content: 'Say hello in one short paragraph.' }],
    max_tokens: 64,
    ...(stream ? { stream: true } : {}),
  });
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
      .join('\n')}\n${target.sessions?.wrkRequestFunction() ?? ''}`,
  );
  const { stdout } = await run(
    'taskset',
    ['-c', LOAD_CORE, 'wrk', '-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '-s', script, `${target.origin}${CHAT_PATH}`],
    {
      maxBuffer: 1 << 20,
    },
  );
  const number = (pattern: RegExp) => Number(pattern.exec(stdout)?.[1] ?? Number.NaN);
  target.sessions?.advance(number(/(\d+) requests in/));
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
  /** Every answered request's latency, sorted, so that slices can be pooled. */
  latencies: Float64Array;
}

/** Several open-loop slices of one target as one sample: percentiles over all their requests. */
export function pooledOpenLoop(slices: readonly OpenLoopResult[]): OpenLoopResult {
  const completed = slices.reduce((sum, slice) => sum + slice.completed, 0);
  const latencies = new Float64Array(completed);
  let offset = 0;
  for (const slice of slices) {
    latencies.set(slice.latencies, offset);
    offset += slice.latencies.length;
  }
  latencies.sort();
  const failed = slices.reduce((sum, slice) => sum + slice.failed, 0);
  return { p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99), completed, failed, latencies };
}

/** One keep-alive pool per target for every open-loop run, as a real client keeps its connections. */
export function openLoopPool(target: Target): Pool {
  return new Pool(target.origin, { connections: 256, pipelining: 1, keepAliveTimeout: 60_000 });
}

/** What open-loop load sends through: a pool, or connections taken in turn. */
export type LoadDispatcher = Pick<Dispatcher, 'dispatch' | 'close'>;

/**
 * `count` keep-alive connections, each request on the next in turn, as many clients would send. A
 * pool sends nearly everything over its first connection while load is light, and a server that
 * balances connections (`serve --workers`, a load balancer) would then see one busy process. The
 * connections are opened one after the other, each answered before the next, so that a balancer
 * taking turns (node:cluster's round robin) gives each process its share.
 */
export async function connectionsInTurn(target: Target, count: number): Promise<LoadDispatcher> {
  const clients: Client[] = [];
  for (let index = 0; index < count; index++) {
    const client = new Client(target.origin, { pipelining: 1, keepAliveTimeout: 60_000 });
    const answer = await client.request({ path: '/health', method: 'GET' });
    await answer.body.dump();
    clients.push(client);
  }
  let next = 0;
  return {
    dispatch: (options, handler) => {
      const client = clients[next] as Client;
      next = (next + 1) % clients.length;
      return client.dispatch(options, handler);
    },
    close: async () => {
      await Promise.all(clients.map((client) => client.close()));
    },
  };
}

/**
 * Open-loop load: requests leave on a fixed schedule whatever the answers do, and latency is
 * counted from the scheduled time, so a stalled server shows as the queueing it causes
 * (no coordinated omission). Because a stall of the generator itself would count too, it is kept
 * lean: undici's dispatch callbacks (no stream or promise per request), latencies in one
 * preallocated array, nothing retained per request once it is answered.
 */
export function openLoop(target: Target, rate: number, seconds: number, pool: LoadDispatcher): Promise<OpenLoopResult> {
  const body = Buffer.from(chatBody(false));
  const headers = { 'content-type': 'application/json', ...target.headers };
  const total = Math.round(rate * seconds);
  const latencies = new Float64Array(total);
  let completed = 0;
  let failed = 0;
  let sent = 0;
  const start = performance.now();
  return new Promise((resolve) => {
    const answered = (): void => {
      if (completed + failed < total) return;
      const sorted = latencies.subarray(0, completed).sort();
      resolve({ p50Ms: percentile(sorted, 0.5), p99Ms: percentile(sorted, 0.99), completed, failed, latencies: sorted });
    };
    const sessions = target.sessions;
    const send = (scheduled: number): void => {
      let status = 0;
      pool.dispatch(
        { path: CHAT_PATH, method: 'POST', headers: sessions === undefined ? headers : sessions.headers(headers), body },
        {
          onConnect: () => undefined,
          onHeaders: (statusCode: number) => {
            status = statusCode;
            return true;
          },
          onData: () => true,
          onComplete: () => {
            if (status === 200) latencies[completed++] = performance.now() - scheduled;
            else failed++;
            answered();
          },
          onError: () => {
            failed++;
            answered();
          },
        },
      );
    };
    const tick = (): void => {
      const now = performance.now();
      while (sent < total && start + (sent * 1000) / rate <= now) send(start + (sent++ * 1000) / rate);
      if (sent < total) setImmediate(tick);
    };
    tick();
  });
}

export interface StreamProbeResult {
  firstByteMs: number;
  totalMs: number;
}

/** One streamed request at a time: median time to the first body byte and to the end. */
export async function streamProbe(target: Target, count: number, stream?: Omit<StreamRequest, 'endMarker'>): Promise<StreamProbeResult> {
  const pool = new Pool(target.origin, { connections: 1 });
  const headers = { 'content-type': 'application/json', ...target.headers };
  const path = stream?.path ?? CHAT_PATH;
  const body = stream?.body ?? chatBody(true);
  const firstBytes: number[] = [];
  const totals: number[] = [];
  for (let index = 0; index < count; index++) {
    const start = performance.now();
    const response = await pool.request({ path, method: 'POST', headers: target.sessions?.headers(headers) ?? headers, body });
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

/** What a stream request is: chat's by default; the native scenario sends its own. */
export interface StreamRequest {
  path: string;
  body: string;
  /** Text a complete stream contains. */
  endMarker: string;
}

/** Holds `count` slow streams open at once and watches the target's memory. */
export async function concurrentStreams(
  target: Target,
  count: number,
  stream?: StreamRequest,
  midway?: { afterMs: number; probe: () => Promise<void> },
): Promise<ConcurrentStreamsResult> {
  const agent = new Agent({ connections: count + 16, keepAliveTimeout: 30_000, bodyTimeout: 120_000, headersTimeout: 120_000 });
  const headers = { 'content-type': 'application/json', ...target.headers };
  const path = stream?.path ?? CHAT_PATH;
  const body = stream?.body ?? chatBody(true, target.slowModel ?? 'slow-stream');
  const endMarker = stream?.endMarker ?? '[DONE]';
  await new Promise((resolve) => setTimeout(resolve, 500));
  const idleRssBytes = rssBytes(target.pid);
  let peakRssBytes = idleRssBytes;
  const sampler = setInterval(() => {
    peakRssBytes = Math.max(peakRssBytes, rssBytes(target.pid));
  }, 200);
  let completed = 0;
  const probed =
    midway === undefined ? Promise.resolve() : new Promise<void>((resolve) => setTimeout(() => void midway.probe().then(resolve, resolve), midway.afterMs));
  await Promise.all([
    probed,
    ...Array.from({ length: count }, async () => {
      try {
        const response = await request(`${target.origin}${path}`, {
          method: 'POST',
          headers: target.sessions?.headers(headers) ?? headers,
          body,
          dispatcher: agent,
        });
        const text = await response.body.text();
        if (response.statusCode === 200 && text.includes(endMarker)) completed++;
      } catch {
        // Counted as not completed.
      }
    }),
  ]);
  clearInterval(sampler);
  await agent.close();
  return { idleRssBytes, peakRssBytes, bytesPerStream: (peakRssBytes - idleRssBytes) / count, completed };
}

export function median(values: number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}

function percentile(sorted: ArrayLike<number>, fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] as number;
}
