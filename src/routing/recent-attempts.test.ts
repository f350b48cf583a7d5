import { describe, expect, it } from 'vitest';
import { RecentAttempts } from './recent-attempts.js';

describe('RecentAttempts', () => {
  it('counts attempts, failures and the mean time of the others over the last ten minutes, per credential', () => {
    let now = 1_700_000_000_000;
    const recent = new RecentAttempts(() => now);
    recent.note('a', false, 100);
    recent.note('a', true, 5000);
    recent.note('b', true, 5000);
    expect(recent.count('a')).toEqual({ attempts: 2, failures: 1, meanMs: 100 });
    expect(recent.count('b')).toEqual({ attempts: 1, failures: 1, meanMs: null });
    expect(recent.count('unknown')).toEqual({ attempts: 0, failures: 0, meanMs: null });
    now += 9 * 60_000;
    recent.note('a', false, 201);
    expect(recent.count('a')).toEqual({ attempts: 3, failures: 1, meanMs: 151 });
    // Eleven minutes after the first two: only the later attempt is left.
    now += 2 * 60_000;
    expect(recent.count('a')).toEqual({ attempts: 1, failures: 0, meanMs: 201 });
    now += 10 * 60_000;
    expect(recent.count('a')).toEqual({ attempts: 0, failures: 0, meanMs: null });
  });

  it('reuses a slot for a new minute instead of adding to its old count', () => {
    let now = 0;
    const recent = new RecentAttempts(() => now);
    recent.note('a', true, 5000);
    now += 10 * 60_000;
    recent.note('a', false, 100);
    expect(recent.count('a')).toEqual({ attempts: 1, failures: 0, meanMs: 100 });
  });
});
