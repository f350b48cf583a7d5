import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { request } from 'undici';
import type { Gateway } from '../../src/gateway.js';
import type { RequestLogEntry } from '../../src/store/index.js';
import { FAULTS, startFaultUpstream, type FaultUpstream } from '../fake-upstreams/fault-upstream.js';
import { resetCredentials } from '../support/reset-credentials.js';
import { startTestGateway } from '../support/start-test-gateway.js';

/** Caps small enough that the fault upstream's huge bodies pass them at once. */
export const TEST_CAP_BYTES = 1024 * 1024;
/** The `fault` credential's pool: two paused streams of one token may hold it (half). */
export const FAULT_POOL_SIZE = 4;
export const BODY_TIMEOUT_MS = 400;
export const PAUSED_STREAM_TIMEOUT_MS = 600;
export const SHUTDOWN_TIMEOUT_MS = 800;
/** A chat request's messages, for the suites' requests. */
export const MESSAGES = [{ role: 'user', content: 'Hello' }];
/** Event-loop lag, in ms, past which a request held the gateway (the defects held it for 4.7–17 s). */
export const LAG_BOUND_MS = 200;

export interface FaultHarness {
  gateway: Gateway;
  upstream: FaultUpstream;
  token: string;
  /** A second token, to show one token's paused streams do not starve another's. */
  otherToken: string;
  directory: string;
  databasePath: string;
  /** Every log line the gateway wrote, parsed. */
  logLines: Array<Record<string, unknown>>;
  post(path: string, body: unknown, options?: { token?: string; headers?: Record<string, string> }): Promise<Answer>;
  health(): Promise<number>;
  logRow(requestId: string): Promise<RequestLogEntry>;
  close(): Promise<void>;
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: { error?: { message: string; type: string; code: string; param: string | null } } & Record<string, unknown>;
  requestId: string;
}

/**
 * A real gateway (config file, SQLite, a free port) in front of the fault upstream, reached as an
 * OpenAI, an Anthropic and a Gemini upstream. Public models are named `{provider}-{fault}`, and
 * `failover-{fault}` tries the fault first and a healthy credential second.
 */
export async function startFaultHarness(serverOverrides: Record<string, unknown> = {}, documentOverrides: Record<string, unknown> = {}): Promise<FaultHarness> {
  const upstream = await startFaultUpstream();
  const caps = { max_response_bytes: TEST_CAP_BYTES, max_event_bytes: TEST_CAP_BYTES };
  const models: unknown[] = [];
  for (const fault of FAULTS) {
    models.push({ id: `openai-${fault}`, type: 'chat', routes: [{ upstream: 'fault', model: fault }] });
    models.push({ id: `anthropic-${fault}`, type: 'chat', routes: [{ upstream: 'fault-anthropic', model: fault }] });
    models.push({ id: `gemini-${fault}`, type: 'chat', routes: [{ upstream: 'fault-gemini', model: fault }] });
    models.push({
      id: `failover-${fault}`,
      type: 'chat',
      strategy: 'ordered',
      routes: [
        { upstream: 'fault', model: fault, priority: 0 },
        { upstream: 'fault-backup', model: 'ok', priority: 1 },
      ],
    });
  }
  models.push({ id: 'embed', type: 'embedding', routes: [{ upstream: 'fault', model: 'ok' }] });
  const document = {
    server: {
      host: '127.0.0.1',
      port: 0,
      shutdown_timeout_ms: SHUTDOWN_TIMEOUT_MS,
      body_timeout_ms: BODY_TIMEOUT_MS,
      paused_stream_timeout_ms: PAUSED_STREAM_TIMEOUT_MS,
      ...serverOverrides,
    },
    logging: { level: 'info' },
    request_log: { flush_interval_ms: 20 },
    upstreams: [
      { id: 'fault', provider: 'openai', base_url: `${upstream.url}/v1`, api_key: 'sk-fault-secret', max_connections: FAULT_POOL_SIZE, ...caps },
      { id: 'fault-backup', provider: 'openai', base_url: `${upstream.url}/v1`, api_key: 'sk-fault-backup', ...caps },
      { id: 'fault-anthropic', provider: 'anthropic', base_url: upstream.url, api_key: 'sk-ant-fault', ...caps },
      { id: 'fault-gemini', provider: 'gemini', base_url: `${upstream.url}/v1beta`, api_key: 'gemini-fault', ...caps },
    ],
    models,
    // The suites send one conversation to each fault model again and again, and each request must
    // meet its fault: a session moved to the backup would skip it.
    routing: { infer_sessions: false },
    ...documentOverrides,
  };
  const logLines: Array<Record<string, unknown>> = [];
  const { gateway, directory, logRow, close } = await startTestGateway(document, { logLines, afterClose: () => upstream.close() });
  const token = (await gateway.tokens.create({ team: 'faults' })).secret;
  const otherToken = (await gateway.tokens.create({ team: 'bystanders' })).secret;
  return {
    gateway,
    upstream,
    token,
    otherToken,
    directory,
    databasePath: join(directory, 'switchyard.db'),
    logLines,
    async post(path, body, options = {}) {
      // Every request must meet its fault: the cooldown the last one opened (tested in
      // test/e2e/credential-pools.test.ts) is ended as an operator's reset would.
      resetCredentials(gateway);
      const response = await request(`${gateway.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${options.token ?? token}`, 'content-type': 'application/json', ...options.headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await response.body.text();
      let json: Answer['json'] = {};
      try {
        json = JSON.parse(text) as Answer['json'];
      } catch {
        // A stream, or no body: the text is what there is.
      }
      return { status: response.statusCode, headers: response.headers, text, json, requestId: String(response.headers['x-request-id']) };
    },
    async health() {
      const response = await request(`${gateway.url}/health`);
      await response.body.text();
      return response.statusCode;
    },
    logRow,
    close,
  };
}

/**
 * Runs `work` while measuring how long the event loop was held at once (the gateway runs in this
 * process) and asking `/health` every 25 ms on fresh requests. Returns the worst lag in
 * milliseconds and how many health checks failed.
 */
export async function whileProbing<T>(
  harness: FaultHarness,
  work: () => Promise<T>,
): Promise<{ result: T; maxLagMs: number; healthChecks: number; healthFailures: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  histogram.enable();
  let running = true;
  let healthChecks = 0;
  let healthFailures = 0;
  const poller = (async () => {
    while (running) {
      const status = await harness.health().catch(() => 0);
      healthChecks++;
      if (status !== 200) healthFailures++;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  })();
  try {
    const result = await work();
    return { result, maxLagMs: histogram.max / 1e6, healthChecks, healthFailures };
  } finally {
    running = false;
    await poller;
    histogram.disable();
  }
}
