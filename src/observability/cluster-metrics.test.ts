import { describe, expect, it } from 'vitest';
import { parseExposition, total, type Sample } from '../../test/support/prometheus-text.js';
import { requestLogEntry } from '../../test/support/request-log-entries.js';
import type { RequestLogEntry } from '../store/index.js';
import { ClusterMetrics, isCollectRequest, sendMetrics, type MetricsWorker } from './cluster-metrics.js';
import { GatewayMetrics, type CredentialGauges } from './metrics.js';
import { SAMPLES_PER_PART } from './series-metrics.js';

function gatewayMetrics(credentials: CredentialGauges[] = [], open = 0): GatewayMetrics {
  return new GatewayMetrics(
    { team: true, maxLabelValues: 5_000, isModel: () => true, onCapReached: () => undefined },
    {
      credentials: () => credentials,
      credentialStates: ['healthy', 'cooling'],
      inFlight: () => new Map([['chat.completions', { open, streaming: 0 }]]),
      quotaUse: async () => [],
      requestLogQueueRows: () => open,
      requestLogDroppedRows: () => 0,
    },
  );
}

/** Workers in this process: each answers the primary's requests with its own metrics, as a worker's IPC handler does. */
function workersOf(cluster: () => ClusterMetrics, metrics: GatewayMetrics[], silent: ReadonlySet<number> = new Set()): MetricsWorker[] {
  return metrics.map((own, index) => ({
    number: index + 1,
    send: (message) => {
      if (!isCollectRequest(message) || silent.has(index + 1)) return;
      // Through JSON, as the IPC channel carries it.
      void sendMetrics(message, own.json(), (reply) => cluster().received(index + 1, JSON.parse(JSON.stringify(reply))));
    },
  }));
}

/**
 * The gateway's own samples (the process metrics are the same process's here), in a stable order,
 * to 12 significant digits: sums added in another order differ in their last bits.
 */
function gatewaySamples(text: string): Sample[] {
  const key = (sample: Sample) => `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`;
  return parseExposition(text)
    .filter((sample) => sample.name.startsWith('switchyard_'))
    .map((sample) => ({ ...sample, value: Number(sample.value.toPrecision(12)), labels: Object.fromEntries(Object.entries(sample.labels).sort()) }))
    .sort((first, second) => key(first).localeCompare(key(second)));
}

function entries(count: number): RequestLogEntry[] {
  return Array.from({ length: count }, (_, index) =>
    requestLogEntry(1_700_000_000_000 + index, {
      model: `model-${index % 7}`,
      team: `team-${index % 3}`,
      status: index % 5 === 0 ? 502 : 200,
      errorCode: index % 5 === 0 ? 'upstream_error' : null,
      latencyMs: (index % 40) * 17.5,
      ttfbMs: (index % 11) * 9,
    }),
  );
}

describe('ClusterMetrics', () => {
  it("adds the workers' request metrics up to what one process that served every request shows", async () => {
    const served = entries(300);
    const alone = gatewayMetrics();
    for (const entry of served) alone.requestFinished(entry);
    const workers = [gatewayMetrics(), gatewayMetrics(), gatewayMetrics()];
    served.forEach((entry, index) => workers[index % 3]?.requestFinished(entry));
    let cluster: ClusterMetrics;
    cluster = new ClusterMetrics(
      () => workersOf(() => cluster, workers),
      () => undefined,
    );
    const added = gatewaySamples(await cluster.text());
    const expected = gatewaySamples(await alone.text()).filter(
      (sample) => sample.name !== 'switchyard_requests_in_flight' && sample.name !== 'switchyard_streams_active',
    );
    expect(added.filter((sample) => sample.name !== 'switchyard_requests_in_flight' && sample.name !== 'switchyard_streams_active')).toEqual(expected);
    expect(total(added, 'switchyard_requests_total')).toBe(300);
  });

  it('joins a metric sent in several parts', async () => {
    // Enough series that the duration histogram (16 samples a series) goes in several parts.
    const served = Array.from({ length: 2_000 }, (_, index) => requestLogEntry(1_700_000_000_000 + index, { model: `model-${index}` }));
    const workers = [gatewayMetrics(), gatewayMetrics()];
    served.forEach((entry, index) => workers[index % 2]?.requestFinished(entry));
    const parts: number[] = [];
    for await (const part of workers[0]?.json() ?? []) if (part.name === 'switchyard_request_duration_seconds') parts.push(part.values.length);
    expect(parts.length).toBeGreaterThan(1);
    expect(Math.max(...parts)).toBeLessThanOrEqual(SAMPLES_PER_PART);
    let cluster: ClusterMetrics;
    cluster = new ClusterMetrics(
      () => workersOf(() => cluster, workers),
      () => undefined,
    );
    const samples = parseExposition(await cluster.text());
    expect(total(samples, 'switchyard_request_duration_seconds_count')).toBe(2_000);
    expect(samples.filter((sample) => sample.name === 'switchyard_request_duration_seconds_count')).toHaveLength(2_000);
  });

  it('adds up what each worker holds, and shows once what the shared state says in every worker', async () => {
    const credential = (inFlight: number, state: string): CredentialGauges => ({
      id: 'key-a',
      state,
      until: null,
      inFlight,
      quotaUse: [],
      tokenExpiresAt: null,
    });
    // Requests in flight and queued rows are each worker's own; a credential's in-flight count is the shared state's.
    const workers = [gatewayMetrics([credential(5, 'healthy')], 2), gatewayMetrics([credential(5, 'healthy')], 3)];
    let cluster: ClusterMetrics;
    cluster = new ClusterMetrics(
      () => workersOf(() => cluster, workers),
      () => undefined,
    );
    const samples = parseExposition(await cluster.text());
    expect(total(samples, 'switchyard_requests_in_flight', { endpoint: 'chat.completions' })).toBe(5);
    expect(total(samples, 'switchyard_request_log_queue_rows')).toBe(5);
    expect(total(samples, 'switchyard_credential_in_flight', { credential: 'key-a' })).toBe(5);
    expect(total(samples, 'switchyard_credential_state', { credential: 'key-a', state: 'healthy' })).toBe(1);
    expect(total(samples, 'switchyard_credential_state', { credential: 'key-a', state: 'cooling' })).toBe(0);
  });

  it('leaves out a worker that does not answer in time, and names it', async () => {
    const workers = [gatewayMetrics(), gatewayMetrics()];
    workers[0]?.requestFinished(requestLogEntry(1_700_000_000_000));
    workers[1]?.requestFinished(requestLogEntry(1_700_000_000_001));
    const missing: number[][] = [];
    let cluster: ClusterMetrics;
    cluster = new ClusterMetrics(
      () => workersOf(() => cluster, workers, new Set([2])),
      (numbers) => missing.push([...numbers]),
      200,
    );
    const samples = parseExposition(await cluster.text());
    expect(total(samples, 'switchyard_requests_total')).toBe(1);
    expect(missing).toEqual([[2]]);
  });

  it('asks the workers once for scrapes that come while a collection is under way', async () => {
    const workers = [gatewayMetrics()];
    let asked = 0;
    let cluster: ClusterMetrics;
    cluster = new ClusterMetrics(
      () =>
        workersOf(() => cluster, workers).map((worker) => ({
          number: worker.number,
          send: (message) => {
            asked++;
            worker.send(message);
          },
        })),
      () => undefined,
    );
    const [first, second, third] = await Promise.all([cluster.text(), cluster.text(), cluster.text()]);
    expect(asked).toBe(1);
    expect(second).toBe(first);
    expect(third).toBe(first);
    await cluster.text();
    expect(asked).toBe(2);
  });

  it('answers with no samples when no worker listens', async () => {
    const cluster = new ClusterMetrics(
      () => [],
      () => undefined,
    );
    expect(parseExposition(await cluster.text())).toEqual([]);
  });
});
