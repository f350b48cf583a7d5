import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from './retry-after.js';

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-24T06:00:00Z');
  it('reads delta-seconds, rounding up', () => {
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter('1.2', now)).toBe(2);
    expect(parseRetryAfter('120', now)).toBe(120);
  });
  it('reads an HTTP date as seconds from now, never negative', () => {
    expect(parseRetryAfter('Tue, 24 Nov 2026 06:00:30 GMT', now)).toBe(30);
    expect(parseRetryAfter('Tue, 24 Nov 2026 05:59:00 GMT', now)).toBe(0);
  });
  it('gives nothing for a missing or unreadable header', () => {
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
  });
});
