import { Counter, Histogram, Registry } from 'prom-client';
import { BoundedSeries } from './bounded-series.js';

/**
 * One sample of the exposition as prom-client's registry formats it. The series' own labels go in
 * `sharedLabels`, which the registry formats once per object and keeps (its histograms do the
 * same), so a scrape does not escape the same label values again; `labels` holds only `le`.
 */
interface ExposedValue {
  value: number;
  readonly labels: Readonly<Record<string, string | number>>;
  readonly sharedLabels: Readonly<Record<string, string>>;
  readonly metricName?: string;
}

interface ExposedMetric {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  values: readonly ExposedValue[];
}

/** The value a sample of one series of a `SeriesCounter` holds: requests add to `value`. */
export interface CounterSeries {
  value: number;
}

/**
 * Samples formatted in one piece, between which a scrape lets requests run. The registry formats
 * about 2,000 samples a millisecond, and half as many the first time it sees a series (it keeps
 * each series' formatted labels), so a part holds the event loop for a few milliseconds however
 * many series a metric has.
 */
export const SAMPLES_PER_PART = 5_000;

const NO_LABELS: Readonly<Record<string, string>> = Object.freeze({});

/** The labels of the sample with these names and values. */
function labelSet(names: readonly string[], values: readonly string[]): Record<string, string> {
  const labels: Record<string, string> = {};
  names.forEach((name, index) => {
    labels[name] = values[index] as string;
  });
  return labels;
}

/** The values with the series' labels in `labels`, as prom-client's own `get()` returns them (for `getMetricsAsJSON`). */
function splayed(values: readonly ExposedValue[]): { value: number; labels: Record<string, string | number>; metricName?: string }[] {
  return values.map((value) => ({
    value: value.value,
    labels: { ...value.labels, ...value.sharedLabels },
    ...(value.metricName === undefined ? {} : { metricName: value.metricName }),
  }));
}

/**
 * A metric object as prom-client's `get()` returns it at run time. Its typings declare `type` as a
 * numeric enum that the library never returns (its metrics give `'counter'`, `'histogram'`), so
 * the object is handed over through `unknown`.
 */
function asPromClientObject<Result>(metric: ExposedMetric): Result {
  return { ...metric, values: splayed(metric.values) } as unknown as Result;
}

/** One part of a metric's samples, in a registry of its own, for prom-client to format. */
class ExposedPart extends Counter<string> {
  constructor(private readonly part: ExposedMetric) {
    super({ name: part.name, help: part.help, registers: [] });
  }

  async getForPromString(): Promise<ExposedMetric> {
    return this.part;
  }
}

/**
 * The metric's exposition in parts of about `SAMPLES_PER_PART` samples that never split a series
 * (`samplesPerSeries` apart), each formatted by prom-client's registry. The first part has the
 * `# HELP` and `# TYPE` lines; the others lose them, as one metric has them once.
 */
async function* exposedInParts(metric: ExposedMetric, samplesPerSeries: number): AsyncGenerator<string> {
  const size = Math.max(1, Math.floor(SAMPLES_PER_PART / samplesPerSeries)) * samplesPerSeries;
  const values = metric.values;
  for (let start = 0; start === 0 || start < values.length; start += size) {
    const registry = new Registry();
    registry.registerMetric(new ExposedPart({ ...metric, values: values.slice(start, start + size) }));
    const text = await registry.getSingleMetricAsString(metric.name);
    yield start === 0 ? text : text.slice(text.indexOf('\n', text.indexOf('\n') + 1) + 1);
  }
}

/**
 * A metric as `getMetricsAsJSON` gives it, in parts of `SAMPLES_PER_PART` samples, for another
 * process to add up (a part may split a histogram's series: the parts of a metric are joined again
 * before anything reads them).
 */
async function* jsonInParts(metric: ExposedMetric): AsyncGenerator<MetricJson> {
  const values = metric.values;
  for (let start = 0; start === 0 || start < values.length; start += SAMPLES_PER_PART)
    yield {
      name: metric.name,
      help: metric.help,
      type: metric.type,
      aggregator: metric.aggregator,
      values: splayed(values.slice(start, start + SAMPLES_PER_PART)),
    };
}

/** A metric as prom-client's `getMetricsAsJSON` gives it at run time: plain data, what workers send their primary. */
export interface MetricJson {
  name: string;
  help: string;
  type: string;
  aggregator: string;
  values: Array<{ value: number; labels: Record<string, string | number>; metricName?: string }>;
}

export interface SeriesMetricOptions {
  name: string;
  help: string;
  labelNames: readonly string[];
  registers: Registry[];
  /** `metrics.max_label_values`: distinct values one label may take before `other`. */
  maxLabelValues: number;
  onCapReached: (metric: string, label: string, cap: number) => void;
}

/**
 * A prom-client counter whose series the gateway keeps itself, in a `BoundedSeries`: a request
 * adds to a plain number (prom-client's own `inc` hashes the label object on every call), and the
 * registry formats the series at the scrape as it formats any counter's, in parts
 * (`exposition()`) when a scrape must not hold the event loop.
 */
export class SeriesCounter extends Counter<string> {
  // Set by prom-client's constructor; its typings do not declare them.
  declare readonly name: string;
  declare readonly help: string;
  readonly series: BoundedSeries<CounterSeries>;
  private readonly exposed: ExposedValue[] = [];

  constructor(options: SeriesMetricOptions) {
    super({ name: options.name, help: options.help, labelNames: options.labelNames, registers: options.registers });
    this.series = new BoundedSeries(
      options.name,
      options.labelNames,
      options.maxLabelValues,
      (values) => {
        const created: ExposedValue = { value: 0, labels: NO_LABELS, sharedLabels: labelSet(options.labelNames, values) };
        this.exposed.push(created);
        return created;
      },
      options.onCapReached,
    );
  }

  /** What the registry formats: the series as they stand. */
  async getForPromString(): Promise<ExposedMetric> {
    return { name: this.name, help: this.help, type: 'counter', aggregator: 'sum', values: this.exposed };
  }

  override async get(): ReturnType<Counter<string>['get']> {
    return asPromClientObject(await this.getForPromString());
  }

  /** The exposition in parts, between which the caller may let requests run. */
  async *exposition(): AsyncGenerator<string> {
    yield* exposedInParts(await this.getForPromString(), 1);
  }

  /** `get()` in parts, between which the caller may let requests run. */
  async *jsonParts(): AsyncGenerator<MetricJson> {
    yield* jsonInParts(await this.getForPromString());
  }
}

/** One series of a `SeriesHistogram`: counts per bucket, their sum and their number. */
export class HistogramSeries {
  private readonly counts: Float64Array;
  private sum = 0;
  private count = 0;

  constructor(
    private readonly bounds: readonly number[],
    /** Its samples: a `_bucket` per bound, `+Inf`, `_sum`, `_count`. */
    private readonly exposed: readonly ExposedValue[],
  ) {
    this.counts = new Float64Array(bounds.length);
  }

  observe(value: number): void {
    // A bucket counts the values up to and including its bound (Prometheus's `le`).
    const bounds = this.bounds;
    for (let index = 0; index < bounds.length; index++)
      if (value <= (bounds[index] as number)) {
        this.counts[index] = (this.counts[index] as number) + 1;
        break;
      }
    this.sum += value;
    this.count++;
  }

  /** Writes the cumulative counts, the sum and the number into the samples. */
  expose(): void {
    let cumulative = 0;
    const exposed = this.exposed;
    for (let index = 0; index < this.counts.length; index++) {
      cumulative += this.counts[index] as number;
      (exposed[index] as ExposedValue).value = cumulative;
    }
    (exposed[this.counts.length] as ExposedValue).value = this.count;
    (exposed[this.counts.length + 1] as ExposedValue).value = this.sum;
    (exposed[this.counts.length + 2] as ExposedValue).value = this.count;
  }
}

/**
 * A prom-client histogram whose series the gateway keeps itself (see `SeriesCounter`): an
 * observation is a short walk over the bounds, and the samples are the ones prom-client's own
 * histogram gives (`_bucket` with `le`, `+Inf`, `_sum`, `_count`), formatted by its registry.
 */
export class SeriesHistogram extends Histogram<string> {
  declare readonly name: string;
  declare readonly help: string;
  readonly series: BoundedSeries<HistogramSeries>;
  private readonly all: HistogramSeries[] = [];
  private readonly exposed: ExposedValue[] = [];
  private readonly samplesPerSeries: number;

  constructor(options: SeriesMetricOptions & { buckets: readonly number[] }) {
    super({ name: options.name, help: options.help, labelNames: options.labelNames, buckets: [...options.buckets], registers: options.registers });
    const bucketName = `${options.name}_bucket`;
    const bucketLabels = [...options.buckets.map((bound) => ({ le: bound })), { le: '+Inf' }];
    this.samplesPerSeries = bucketLabels.length + 2;
    this.series = new BoundedSeries(
      options.name,
      options.labelNames,
      options.maxLabelValues,
      (values) => {
        const sharedLabels = labelSet(options.labelNames, values);
        const samples: ExposedValue[] = [
          ...bucketLabels.map((labels) => ({ value: 0, labels, sharedLabels, metricName: bucketName })),
          { value: 0, labels: NO_LABELS, sharedLabels, metricName: `${options.name}_sum` },
          { value: 0, labels: NO_LABELS, sharedLabels, metricName: `${options.name}_count` },
        ];
        this.exposed.push(...samples);
        const created = new HistogramSeries(options.buckets, samples);
        this.all.push(created);
        return created;
      },
      options.onCapReached,
    );
  }

  /** What the registry formats: the series as they stand. */
  async getForPromString(): Promise<ExposedMetric> {
    for (const series of this.all) series.expose();
    return { name: this.name, help: this.help, type: 'histogram', aggregator: 'sum', values: this.exposed };
  }

  override async get(): ReturnType<Histogram<string>['get']> {
    return asPromClientObject(await this.getForPromString());
  }

  /** The exposition in parts, between which the caller may let requests run; a part never splits a series. */
  async *exposition(): AsyncGenerator<string> {
    yield* exposedInParts(await this.getForPromString(), this.samplesPerSeries);
  }

  /** `get()` in parts, between which the caller may let requests run. */
  async *jsonParts(): AsyncGenerator<MetricJson> {
    yield* jsonInParts(await this.getForPromString());
  }
}
