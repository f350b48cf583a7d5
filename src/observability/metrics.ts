import { setImmediate } from 'node:timers/promises';
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { RequestLogEntry } from '../store/index.js';
import type { BoundedSeries } from './bounded-series.js';
import { registerScrapeMetrics, snakeCase, type MetricsSources } from './scrape-metrics.js';
import { SeriesCounter, SeriesHistogram, type CounterSeries, type HistogramSeries, type MetricJson } from './series-metrics.js';

export type { CredentialGauges, MetricsSources, QuotaGauge } from './scrape-metrics.js';
export type { MetricJson } from './series-metrics.js';

/** The model label of a request whose model is not one the gateway serves (a typo, a probe). */
export const UNKNOWN_MODEL = 'unknown';

/** Seconds; a chat answer takes from a second to minutes, a stream's whole life longer. */
export const DURATION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** Seconds to the first byte (and an upstream's answer head): tens of milliseconds to tens of seconds. */
export const FIRST_BYTE_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Seconds the gateway itself adds: fractions of a millisecond when all is well. */
export const OVERHEAD_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

export interface GatewayMetricsOptions {
  /** `metrics.labels.team`: label requests, tokens and cost with the caller's team. */
  team: boolean;
  /** `metrics.max_label_values`: distinct values one label of one metric may take. */
  maxLabelValues: number;
  /** Whether a model id is one the gateway serves now (anything else is labelled `unknown`). */
  isModel: (id: string) => boolean;
  /** A label reached its cap (told once per metric and label). */
  onCapReached: (metric: string, label: string, cap: number) => void;
}

/**
 * prom-client's default metrics (CPU, memory, event-loop lag, GC), collected once per process: its
 * event-loop monitor and GC observer cannot be stopped, so a process that starts gateways again
 * (a test run, a restart in place) must not start them again each time.
 */
let processMetrics: Registry | null = null;

function processRegistry(): Registry {
  if (processMetrics === null) {
    processMetrics = new Registry();
    collectDefaultMetrics({ register: processMetrics });
  }
  return processMetrics;
}

const TOKEN_KINDS = ['prompt', 'completion', 'cached', 'cache_write', 'reasoning'] as const;

/**
 * The gateway's Prometheus metrics (docs/metrics.md), in a registry of its own, exposed by
 * prom-client. What a request leaves is counted once, when it ends, from its request-log entry,
 * so the counters agree with the request log by construction. Labels carry only bounded values:
 * configured models, endpoints, status classes, error codes, credentials, teams; never a token,
 * session or request id or a caller's free text.
 */
export class GatewayMetrics {
  private readonly registry = new Registry();
  /** What a scrape sees: the gateway's metrics and the process's. */
  private readonly exposed: Registry;
  private readonly requests: BoundedSeries<CounterSeries>;
  private readonly duration: BoundedSeries<HistogramSeries>;
  private readonly firstByte: BoundedSeries<HistogramSeries>;
  private readonly overhead: BoundedSeries<HistogramSeries>;
  private readonly attempts: BoundedSeries<CounterSeries>;
  private readonly upstreamDuration: BoundedSeries<HistogramSeries>;
  private readonly tokens: BoundedSeries<CounterSeries>;
  private readonly cost: BoundedSeries<CounterSeries>;
  private readonly affinity: BoundedSeries<CounterSeries>;
  private readonly refusals: BoundedSeries<CounterSeries>;
  private readonly stateErrors: BoundedSeries<CounterSeries>;

  constructor(
    private readonly options: GatewayMetricsOptions,
    sources: MetricsSources,
  ) {
    const registers = [this.registry];
    const team = options.team ? ['team'] : [];
    const shared = { registers, maxLabelValues: options.maxLabelValues, onCapReached: options.onCapReached };
    const counter = (name: string, help: string, labelNames: readonly string[]) => new SeriesCounter({ name, help, labelNames, ...shared }).series;
    const histogram = (name: string, help: string, labelNames: readonly string[], buckets: readonly number[]) =>
      new SeriesHistogram({ name, help, labelNames, buckets, ...shared }).series;
    this.requests = counter('switchyard_requests_total', 'Requests to /v1 routes, counted when they end.', [
      'endpoint',
      'model',
      'status_class',
      'error_code',
      ...team,
    ]);
    this.duration = histogram(
      'switchyard_request_duration_seconds',
      'Time from a request to the end of its response.',
      ['endpoint', 'model'],
      DURATION_BUCKETS,
    );
    this.firstByte = histogram(
      'switchyard_time_to_first_byte_seconds',
      "Time from a request to its response's first body byte.",
      ['endpoint', 'model'],
      FIRST_BYTE_BUCKETS,
    );
    this.overhead = histogram(
      'switchyard_gateway_overhead_seconds',
      "Time to the first byte less the time spent waiting on upstreams' answers: what the gateway itself added.",
      ['endpoint'],
      OVERHEAD_BUCKETS,
    );
    this.attempts = counter('switchyard_upstream_attempts_total', 'Upstream attempts, by credential and outcome (`ok` or the error code).', [
      'credential',
      'model',
      'outcome',
    ]);
    this.upstreamDuration = histogram(
      'switchyard_upstream_duration_seconds',
      "Time from an attempt's start to the upstream's answer (its head, for a stream).",
      ['credential'],
      FIRST_BYTE_BUCKETS,
    );
    this.tokens = counter('switchyard_tokens_total', 'Tokens of finished requests, as the request log counts them.', ['model', ...team, 'kind']);
    this.cost = counter('switchyard_cost_usd_total', "Cost in US dollars of finished requests, by their model's configured price.", ['model', ...team]);
    this.affinity = counter('switchyard_session_affinity_total', "What became of sessions' credential bindings.", ['decision']);

    this.refusals = counter('switchyard_limit_refusals_total', "Requests refused by a caller's own limit or quota, by the holder whose limit refused.", [
      'holder_kind',
      'limit',
    ]);
    this.stateErrors = counter(
      'switchyard_state_errors_total',
      'Shared-state operations that failed or timed out (requests went on without them), by operation.',
      ['operation'],
    );
    registerScrapeMetrics(registers, sources, options.maxLabelValues, (operation) => this.stateFailed(operation));
    this.exposed = Registry.merge([processRegistry(), this.registry]);
  }

  /** A `/v1` request ended: its entry is what the request log writes. */
  requestFinished(entry: RequestLogEntry): void {
    const { endpoint } = entry;
    const model = this.modelLabel(entry.model);
    const team = entry.team ?? '';
    const statusClass = `${Math.floor(entry.status / 100)}xx`;
    const errorCode = entry.errorCode ?? '';
    (this.options.team ? this.requests.of(endpoint, model, statusClass, errorCode, team) : this.requests.of(endpoint, model, statusClass, errorCode)).value++;
    this.duration.of(endpoint, model).observe(entry.latencyMs / 1000);
    if (entry.ttfbMs !== null) this.firstByte.of(endpoint, model).observe(entry.ttfbMs / 1000);
    const attempts = entry.attempts;
    if (attempts !== null) {
      let waitedMs = 0;
      for (const attempt of attempts) {
        this.attempts.of(attempt.credential, model, attempt.outcome).value++;
        this.upstreamDuration.of(attempt.credential).observe(attempt.ms / 1000);
        waitedMs += attempt.ms;
      }
      const answeredMs = entry.ttfbMs ?? entry.latencyMs;
      if (entry.errorCode === null) this.overhead.of(endpoint).observe(Math.max(0, answeredMs - waitedMs) / 1000);
    }
    if (entry.affinity !== null) this.affinity.of(entry.affinity).value++;
    this.countTokens(model, team, 'prompt', entry.promptTokens);
    this.countTokens(model, team, 'completion', entry.completionTokens);
    this.countTokens(model, team, 'cached', entry.cachedTokens);
    this.countTokens(model, team, 'cache_write', entry.cacheWriteTokens);
    this.countTokens(model, team, 'reasoning', entry.reasoningTokens);
    if (entry.costUsd !== null && entry.costUsd > 0) (this.options.team ? this.cost.of(model, team) : this.cost.of(model)).value += entry.costUsd;
  }

  /** A request was refused by a caller's own limit: the holder's kind (`token`, `project`, `team`) and the limit's name as the config writes it. */
  limitRefused(holderKind: string, limit: string): void {
    this.refusals.of(holderKind, snakeCase(limit)).value++;
  }

  /** A shared-state operation failed or timed out (`caller_limits`, `session_bindings`, `routing_state`, `response_store`). */
  stateFailed(operation: string): void {
    this.stateErrors.of(operation).value++;
  }

  /**
   * The exposition, in Prometheus's text format, formatted by prom-client's registry one metric at
   * a time, and the request metrics in parts of a few thousand samples (`SAMPLES_PER_PART`), with
   * requests served between them: a scrape of many series never holds the event loop for long
   * (`Registry.metrics()` formats everything in one go).
   */
  async text(): Promise<string> {
    const exposition: string[] = [];
    for (const metric of this.exposed.getMetricsAsArray()) {
      const parts: string[] = [];
      if (metric instanceof SeriesCounter || metric instanceof SeriesHistogram)
        for await (const part of metric.exposition()) {
          parts.push(part);
          await setImmediate();
        }
      else {
        parts.push(await this.exposed.getSingleMetricAsString(metric.name));
        await setImmediate();
      }
      exposition.push(parts.join('\n'));
    }
    // The framing `Registry.metrics()` gives: a blank line between metrics, a newline at the end.
    return `${exposition.join('\n\n')}\n`;
  }

  /**
   * What `getMetricsAsJSON` gives, metric by metric and the request metrics in parts, with
   * requests served between them: what a worker of `serve --workers` sends its primary, which adds
   * every worker's up (cluster-metrics.ts).
   */
  async *json(): AsyncGenerator<MetricJson> {
    for (const metric of this.exposed.getMetricsAsArray()) {
      if (metric instanceof SeriesCounter || metric instanceof SeriesHistogram)
        for await (const part of metric.jsonParts()) {
          yield part;
          await setImmediate();
        }
      else {
        const json = await this.exposed.getSingleMetric(metric.name)?.get();
        if (json !== undefined) yield json as unknown as MetricJson;
        await setImmediate();
      }
    }
  }

  get contentType(): string {
    return this.exposed.contentType;
  }

  private countTokens(model: string, team: string, kind: (typeof TOKEN_KINDS)[number], count: number | null): void {
    if (count === null || count <= 0) return;
    (this.options.team ? this.tokens.of(model, team, kind) : this.tokens.of(model, kind)).value += count;
  }

  private modelLabel(model: string | null): string {
    if (model === null) return '';
    return this.options.isModel(model) ? model : UNKNOWN_MODEL;
  }
}
