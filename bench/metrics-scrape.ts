/**
 * What a scrape of `/metrics` costs with many series (issue 33): 500 models × 20 teams × 10
 * credentials, every request metric filled, then the exposition built several times while a timer
 * watches the event loop. Prints the scrape's duration and the longest the loop was held, and
 * exits 1 past the bounds (200 ms a scrape, 50 ms a block).
 *
 *   node dist-bench/metrics-scrape.js [--models 500] [--teams 20] [--credentials 10] [--scrapes 5]
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { positiveFlag, runCommand } from './cpu-window.js';

/** The part of the built `GatewayMetrics` (dist/observability/metrics.js) this bench drives. */
interface Metrics {
  requestFinished(entry: Record<string, unknown>): void;
  text(): Promise<string>;
}
type MetricsConstructor = new (options: Record<string, unknown>, sources: Record<string, unknown>) => Metrics;

async function builtMetrics(): Promise<MetricsConstructor> {
  const file = join(fileURLToPath(new URL('..', import.meta.url)), 'dist', 'observability', 'metrics.js');
  if (!existsSync(file)) throw new Error(`${file} is missing: run npm run build first`);
  return ((await import(pathToFileURL(file).href)) as { GatewayMetrics: MetricsConstructor }).GatewayMetrics;
}

const SCRAPE_BOUND_MS = 200;
const BLOCK_BOUND_MS = 50;

runCommand('metrics-scrape', async () => {
  const argv = process.argv.slice(2);
  const models = positiveFlag(argv, '--models', 500, true);
  const teams = positiveFlag(argv, '--teams', 20, true);
  const credentials = positiveFlag(argv, '--credentials', 10, true);
  const scrapes = positiveFlag(argv, '--scrapes', 5, true);
  const credentialIds = Array.from({ length: credentials }, (_, index) => `credential-${index}`);
  const GatewayMetrics = await builtMetrics();
  const metrics = new GatewayMetrics(
    { team: true, maxLabelValues: Math.max(500, models), isModel: () => true, onCapReached: () => undefined },
    {
      credentials: () =>
        credentialIds.map((id, index) => ({
          id,
          state: index % 3 === 0 ? 'cooling' : 'healthy',
          until: index % 3 === 0 ? Date.now() + 30_000 : null,
          inFlight: index,
          quotaUse: [{ window: 'primary', usedRatio: 0.5 }],
          tokenExpiresAt: Date.now() + 3_600_000,
        })),
      credentialStates: ['healthy', 'cooling', 'failed', 'disabled'],
      inFlight: () => new Map([['chat.completions', { open: 10, streaming: 4 }]]),
      quotaUse: async () =>
        Array.from({ length: teams }, (_, index) => ({ holderKind: 'team', holder: `team-${index}`, limit: 'tokensPerDay', usedRatio: 0.3 })),
      requestLogQueueRows: () => 0,
      requestLogDroppedRows: () => 0,
    },
  );
  const started = Date.now();
  let serial = 0;
  for (let model = 0; model < models; model++)
    for (let team = 0; team < teams; team++) {
      const credential = credentialIds[(model + team) % credentials] as string;
      const entry = {
        id: `req_${serial++}`,
        clientRequestId: null,
        createdAt: started,
        tokenId: 'tok_bench',
        team: `team-${team}`,
        project: null,
        endpoint: 'chat.completions',
        model: `model-${model}`,
        upstream: credential,
        upstreamModel: `upstream-${model}`,
        sessionId: null,
        status: 200,
        latencyMs: 120,
        ttfbMs: 40,
        promptTokens: 100,
        completionTokens: 20,
        cachedTokens: 10,
        reasoningTokens: 5,
        costUsd: 0.001,
        usageSource: 'upstream',
        errorCode: null,
        sessionSource: 'header',
        affinity: 'kept',
        attempts: [{ credential, outcome: 'ok', status: 200, ms: 35 }],
        clientAddress: '127.0.0.1',
      };
      metrics.requestFinished(entry);
    }
  // A timer due every millisecond: the longest gap between its runs is the longest the scrape held the loop.
  let longestBlockMs = 0;
  let lastTick = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    longestBlockMs = Math.max(longestBlockMs, now - lastTick);
    lastTick = now;
  }, 1);
  const durations: number[] = [];
  let text = '';
  for (let scrape = 0; scrape < scrapes; scrape++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    const begun = performance.now();
    text = await metrics.text();
    durations.push(performance.now() - begun);
  }
  // Lets the timer run once more after the last scrape, so that the gap it ended is counted.
  await new Promise((resolve) => setTimeout(resolve, 5));
  clearInterval(ticker);
  const slowest = Math.max(...durations);
  const bytes = text.length;
  const lines = text.split('\n').filter((line) => line !== '' && !line.startsWith('#')).length;
  console.log(
    `metrics-scrape: ${models} models × ${teams} teams × ${credentials} credentials: ${lines} samples, ${(bytes / 1024 / 1024).toFixed(1)} MB; ` +
      `scrape ${durations.map((duration) => duration.toFixed(0)).join(', ')} ms (bound ${SCRAPE_BOUND_MS}); longest event-loop block ${longestBlockMs.toFixed(0)} ms (bound ${BLOCK_BOUND_MS})`,
  );
  return slowest <= SCRAPE_BOUND_MS && longestBlockMs <= BLOCK_BOUND_MS ? 0 : 1;
});
