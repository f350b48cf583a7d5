import { describe, expect, it } from 'vitest';
import { BoundedSeries } from './bounded-series.js';

describe('BoundedSeries', () => {
  it('keeps one child per label values, and counts values past a label cap under "other", told once per label', () => {
    const made: string[][] = [];
    const told: string[] = [];
    const series = new BoundedSeries(
      'requests',
      ['model', 'team'],
      2,
      (values) => {
        made.push([...values]);
        return { values: [...values] };
      },
      (metric, label, cap) => told.push(`${metric}.${label}@${cap}`),
    );
    const first = series.of('a', 'x');
    expect(series.of('a', 'x')).toBe(first);
    series.of('b', 'x');
    const third = series.of('c', 'x');
    expect(third).toEqual({ values: ['other', 'x'] });
    expect(series.of('d', 'x')).toBe(third);
    series.of('a', 'y');
    expect(series.of('a', 'z')).toEqual({ values: ['a', 'other'] });
    expect(told).toEqual(['requests.model@2', 'requests.team@2']);
    expect(made).toEqual([
      ['a', 'x'],
      ['b', 'x'],
      ['other', 'x'],
      ['a', 'y'],
      ['a', 'other'],
    ]);
  });

  it('holds a bounded number of children whatever callers send', () => {
    const series = new BoundedSeries(
      'requests',
      ['model'],
      10,
      (values) => values.join(),
      () => undefined,
    );
    for (let index = 0; index < 10_000; index++) series.of(`model-${index}`);
    expect(series.size).toBe(11);
  });
});
