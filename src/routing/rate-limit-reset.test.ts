import { describe, expect, it } from 'vitest';
import { goDurationMs, rateLimitResetMs } from './rate-limit-reset.js';

const NOW = Date.parse('2026-11-24T10:00:00Z');

describe('rateLimitResetMs', () => {
  it("reads OpenAI's Go durations, the spent limit deciding", () => {
    expect(
      rateLimitResetMs(
        {
          'x-ratelimit-remaining-requests': '0',
          'x-ratelimit-reset-requests': '6m0s',
          'x-ratelimit-remaining-tokens': '900',
          'x-ratelimit-reset-tokens': '20ms',
        },
        NOW,
      ),
    ).toBe(360_000);
    expect(
      rateLimitResetMs(
        { 'x-ratelimit-remaining-requests': '12', 'x-ratelimit-reset-requests': '2s', 'x-ratelimit-remaining-tokens': '0', 'x-ratelimit-reset-tokens': '1.5s' },
        NOW,
      ),
    ).toBe(1_500);
  });

  it("reads Anthropic's RFC 3339 times, and takes the earliest reset when none says it is spent", () => {
    expect(
      rateLimitResetMs(
        {
          'anthropic-ratelimit-requests-remaining': '0',
          'anthropic-ratelimit-requests-reset': '2026-11-24T10:00:30Z',
          'anthropic-ratelimit-tokens-reset': '2026-11-24T10:00:05Z',
        },
        NOW,
      ),
    ).toBe(30_000);
    expect(
      rateLimitResetMs(
        { 'anthropic-ratelimit-input-tokens-reset': '2026-11-24T10:00:07Z', 'anthropic-ratelimit-output-tokens-reset': '2026-11-24T10:00:04Z' },
        NOW,
      ),
    ).toBe(4_000);
    expect(rateLimitResetMs({ 'anthropic-ratelimit-requests-reset': '2026-11-24T09:59:00Z' }, NOW)).toBe(0);
  });

  it('says nothing when the headers say nothing usable', () => {
    expect(rateLimitResetMs({}, NOW)).toBeNull();
    expect(rateLimitResetMs({ 'x-ratelimit-reset-requests': 'soon', 'retry-after': '3' }, NOW)).toBeNull();
  });
});

describe('goDurationMs', () => {
  it('reads every unit Go prints, rounding up to a millisecond', () => {
    expect(goDurationMs('1h2m3.5s')).toBe(3_723_500);
    expect(goDurationMs('20ms')).toBe(20);
    expect(goDurationMs('0s')).toBe(0);
    expect(goDurationMs('1500us')).toBe(2);
    expect(goDurationMs('7ns')).toBe(1);
    expect(goDurationMs('1 s')).toBeNull();
    expect(goDurationMs('-1s')).toBeNull();
  });
});
