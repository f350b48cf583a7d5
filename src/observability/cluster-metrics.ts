import { AggregatorRegistry, Registry } from 'prom-client';
import type { MetricJson } from './series-metrics.js';

/**
 * The metrics of `serve --workers` (docs/workers.md): a scrape, on any worker's port or on the
 * primary's `metrics.listen`, shows the workers added up, as one gateway. The primary asks each
 * listening worker for its metrics (`CollectRequest`); a worker sends them in parts
 * (`MetricsPart`, a few thousand samples each, serving requests between them) and then
 * `CollectDone`; the primary joins each worker's parts and lets prom-client's `AggregatorRegistry`
 * add them up, each metric by its `aggregator` (a sum, unless it says otherwise), and format them.
 */
export interface CollectRequest {
  type: 'switchyard:metrics-collect';
  id: number;
}

export interface MetricsPart {
  type: 'switchyard:metrics-part';
  id: number;
  metric: MetricJson;
}

export interface CollectDone {
  type: 'switchyard:metrics-done';
  id: number;
  /** Why the worker could not give its metrics. */
  error?: string;
}

function hasType(message: unknown, type: string): boolean {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === type;
}

export function isCollectRequest(message: unknown): message is CollectRequest {
  return hasType(message, 'switchyard:metrics-collect');
}

/** A worker's answer to `CollectRequest`: its metrics in parts, then done. */
export async function sendMetrics(
  request: CollectRequest,
  metrics: AsyncIterable<MetricJson>,
  send: (message: MetricsPart | CollectDone) => void,
): Promise<void> {
  try {
    for await (const metric of metrics) send({ type: 'switchyard:metrics-part', id: request.id, metric });
    send({ type: 'switchyard:metrics-done', id: request.id });
  } catch (error) {
    send({ type: 'switchyard:metrics-done', id: request.id, error: error instanceof Error ? error.message : String(error) });
  }
}

/** A worker the primary can ask: its number and its IPC channel. */
export interface MetricsWorker {
  readonly number: number;
  send(message: CollectRequest): void;
}

interface Collection {
  /** Each worker's metrics by name, its parts joined. */
  readonly byWorker: Map<number, Map<string, MetricJson>>;
  readonly waiting: Set<number>;
  readonly done: () => void;
}

/**
 * The primary's side: asks the workers that listen and adds up what they send. A worker that has
 * not answered within `timeoutMs` (busy, or dying) is left out of that scrape and named to
 * `onMissing`, so one stuck worker cannot fail every scrape.
 */
export class ClusterMetrics {
  private nextId = 0;
  private readonly collections = new Map<number, Collection>();
  /** The collection under way: scrapes that come meanwhile share it, so the primary holds one copy of every worker's metrics at a time, however many scrape. */
  private collecting: Promise<string> | null = null;
  readonly contentType = Registry.PROMETHEUS_CONTENT_TYPE;

  constructor(
    private readonly workers: () => readonly MetricsWorker[],
    private readonly onMissing: (workers: readonly number[]) => void,
    private readonly timeoutMs = 5_000,
  ) {}

  /** A message from worker `number`: a part or the end of its answer. */
  received(number: number, message: unknown): void {
    if (hasType(message, 'switchyard:metrics-part')) {
      const { id, metric } = message as MetricsPart;
      const metrics = this.collections.get(id)?.byWorker.get(number);
      if (metrics === undefined) return;
      const known = metrics.get(metric.name);
      if (known === undefined) metrics.set(metric.name, metric);
      else known.values.push(...metric.values);
    } else if (hasType(message, 'switchyard:metrics-done')) {
      const { id, error } = message as CollectDone;
      const collection = this.collections.get(id);
      if (collection === undefined || !collection.waiting.delete(number)) return;
      // A worker that failed to collect is left out, as one that did not answer.
      if (error !== undefined) collection.byWorker.delete(number);
      if (collection.waiting.size === 0) collection.done();
    }
  }

  /** The exposition of every listening worker's metrics added up. */
  text(): Promise<string> {
    if (this.collecting === null)
      this.collecting = this.collect().finally(() => {
        this.collecting = null;
      });
    return this.collecting;
  }

  private async collect(): Promise<string> {
    const id = this.nextId++;
    const workers = this.workers();
    let done: () => void = () => undefined;
    const finished = new Promise<void>((resolve) => {
      done = resolve;
    });
    const collection: Collection = { byWorker: new Map(), waiting: new Set(), done };
    this.collections.set(id, collection);
    for (const worker of workers) {
      collection.byWorker.set(worker.number, new Map());
      collection.waiting.add(worker.number);
      worker.send({ type: 'switchyard:metrics-collect', id });
    }
    if (collection.waiting.size === 0) done();
    const timer = setTimeout(done, this.timeoutMs);
    try {
      await finished;
    } finally {
      clearTimeout(timer);
      this.collections.delete(id);
    }
    if (collection.waiting.size > 0) {
      for (const number of collection.waiting) collection.byWorker.delete(number);
      this.onMissing([...collection.waiting].sort((first, second) => first - second));
    }
    const registry = AggregatorRegistry.aggregate([...collection.byWorker.values()].map((metrics) => [...metrics.values()]));
    return registry.metrics();
  }
}
