import { describe, expect, it } from 'vitest';
import { formatDuration } from './rate-limit-headers.js';

describe('formatDuration', () => {
  it('writes resets as OpenAI does', () => {
    expect(formatDuration(0)).toBe('0ms');
    expect(formatDuration(250)).toBe('250ms');
    expect(formatDuration(1_500)).toBe('1.5s');
    expect(formatDuration(40_000)).toBe('40s');
    expect(formatDuration(59_999)).toBe('59.999s');
    expect(formatDuration(60_000)).toBe('1m0s');
    expect(formatDuration(360_000)).toBe('6m0s');
    expect(formatDuration(90_500)).toBe('1m30.5s');
  });
});
