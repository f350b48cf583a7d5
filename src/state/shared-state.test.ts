import { describe, expect, it } from 'vitest';
import { slidingWindowEstimate, type WindowCount } from './shared-state.js';

describe('slidingWindowEstimate', () => {
  const count: WindowCount = { current: 4, previous: 10, windowStartMs: 60_000, windowMs: 1_000 };

  it('weights the previous window by the share the sliding window still overlaps', () => {
    expect(slidingWindowEstimate(count, 60_000)).toBe(14);
    expect(slidingWindowEstimate(count, 60_250)).toBe(11.5);
    expect(slidingWindowEstimate(count, 60_500)).toBe(9);
    expect(slidingWindowEstimate(count, 60_999)).toBeCloseTo(4.01, 10);
  });

  it('ages a count read earlier: its current window becomes the previous one, then nothing', () => {
    expect(slidingWindowEstimate(count, 61_000)).toBe(4);
    expect(slidingWindowEstimate(count, 61_750)).toBe(1);
    expect(slidingWindowEstimate(count, 62_000)).toBe(0);
    expect(slidingWindowEstimate(count, 1e15)).toBe(0);
  });

  it('takes a time before the window (a clock behind the backend) as its start', () => {
    expect(slidingWindowEstimate(count, 59_000)).toBe(14);
  });
});
