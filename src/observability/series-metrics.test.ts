import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { SAMPLES_PER_PART, SeriesCounter, SeriesHistogram } from './series-metrics.js';

const BUCKETS = [0.1, 0.5, 1, 5];

function options(registry: Registry, name: string, labelNames: readonly string[]) {
  return { name, help: `What ${name} counts.`, labelNames, registers: [registry], maxLabelValues: 100_000, onCapReached: () => undefined };
}

async function joined(parts: AsyncIterable<string>): Promise<string> {
  const texts: string[] = [];
  for await (const part of parts) texts.push(part);
  return texts.join('\n');
}

describe('SeriesCounter and SeriesHistogram', () => {
  it("expose exactly what prom-client's own counter and histogram expose for the same observations", async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const counter = new SeriesCounter(options(ours, 'things_total', ['model', 'kind']));
    const histogram = new SeriesHistogram({ ...options(ours, 'wait_seconds', ['model']), buckets: BUCKETS });
    const promCounter = new Counter({ name: 'things_total', help: 'What things_total counts.', labelNames: ['model', 'kind'], registers: [theirs] });
    const promHistogram = new Histogram({
      name: 'wait_seconds',
      help: 'What wait_seconds counts.',
      labelNames: ['model'],
      buckets: BUCKETS,
      registers: [theirs],
    });
    // Values on a bucket's bound, between bounds, past the last one; label values that need escaping.
    const observations: [string, number][] = [
      ['gpt-4o', 0.1],
      ['gpt-4o', 0.3],
      ['gpt-4o', 7],
      ['a "quoted"\\model\nname', 1],
      ['gpt-4o', 0.05],
    ];
    for (const [model, seconds] of observations) {
      histogram.series.of(model).observe(seconds);
      promHistogram.observe({ model }, seconds);
      counter.series.of(model, 'prompt').value += 3;
      promCounter.inc({ model, kind: 'prompt' }, 3);
    }
    expect(await ours.metrics()).toBe(await theirs.metrics());
    // prom-client's own samples carry `exemplar: null` (exemplars are off); nothing else may differ.
    const plain = (metrics: unknown) => JSON.parse(JSON.stringify(metrics, (key, value: unknown) => (key === 'exemplar' ? undefined : value))) as unknown;
    expect(plain(await ours.getMetricsAsJSON())).toEqual(plain(await theirs.getMetricsAsJSON()));
  });

  it('give the same exposition in parts as in one piece, with the help and type lines once and no series split', async () => {
    const registry = new Registry();
    const counter = new SeriesCounter(options(registry, 'many_total', ['model']));
    const histogram = new SeriesHistogram({ ...options(registry, 'many_seconds', ['model']), buckets: BUCKETS });
    const seriesCount = Math.ceil((2.5 * SAMPLES_PER_PART) / (BUCKETS.length + 3));
    for (let index = 0; index < seriesCount; index++) {
      counter.series.of(`model-${index}`).value = index;
      histogram.series.of(`model-${index}`).observe(index / 100);
    }
    const histogramParts: string[] = [];
    for await (const part of histogram.exposition()) histogramParts.push(part);
    expect(histogramParts.length).toBeGreaterThanOrEqual(3);
    // Every part ends with a series' `_count` line: none is split between parts.
    for (const part of histogramParts) expect(part.split('\n').at(-1)).toMatch(/^many_seconds_count\{/);
    expect(histogramParts.join('\n')).toBe(await registry.getSingleMetricAsString('many_seconds'));
    expect(await joined(counter.exposition())).toBe(await registry.getSingleMetricAsString('many_total'));
    expect((await joined(counter.exposition())).match(/^# (HELP|TYPE) /gm)).toHaveLength(2);
  });

  it('expose the help and type lines of a metric without series', async () => {
    const registry = new Registry();
    const counter = new SeriesCounter(options(registry, 'none_total', ['model']));
    expect(await joined(counter.exposition())).toBe('# HELP none_total What none_total counts.\n# TYPE none_total counter');
  });
});
