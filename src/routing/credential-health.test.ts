import { describe, expect, it } from 'vitest';
import type { FailureClass, UpstreamFailure } from '../errors/index.js';
import { CredentialHealth, type CredentialTransition } from './credential-health.js';

function failure(failureClass: FailureClass, status: number | null, options: Partial<UpstreamFailure> = {}): UpstreamFailure {
  return { class: failureClass, status, retryAfterSeconds: null, rateLimitHeaders: {}, credentialId: 'a', message: 'boom', ...options };
}

function setup(maxCooldownMs = 300_000) {
  const clock = { now: 1_000_000 };
  const transitions: CredentialTransition[] = [];
  const health = new CredentialHealth({ now: () => clock.now, maxCooldownMs, onTransition: (transition) => transitions.push(transition) });
  return { clock, transitions, health };
}

describe('CredentialHealth', () => {
  it("cools a rate-limited credential for the upstream's Retry-After, then lets one request probe it", () => {
    const { clock, transitions, health } = setup();
    health.failed('a', failure('rate_limit', 429, { retryAfterSeconds: 2 }));
    expect(health.status('a')).toMatchObject({ state: 'cooling', until: clock.now + 2_000 });
    expect(health.take('a')).toBe(false);
    clock.now += 2_000;
    expect(health.take('a')).toBe(true);
    // The probe is in flight: nobody else uses it until it ends.
    expect(health.take('a')).toBe(false);
    health.succeeded('a');
    expect(health.status('a').state).toBe('healthy');
    expect(health.take('a')).toBe(true);
    expect(transitions.map(({ from, to }) => `${from}→${to}`)).toEqual(['healthy→cooling', 'cooling→healthy']);
    expect(transitions[0]).toMatchObject({ credentialId: 'a', until: 1_002_000, reason: 'rate limited (the upstream said until when)' });
  });

  it('takes the reset headers when there is no Retry-After, and caps every cooldown at max_cooldown', () => {
    const { clock, health } = setup(60_000);
    health.failed('a', failure('rate_limit', 429, { rateLimitHeaders: { 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '20s' } }));
    expect(health.status('a').until).toBe(clock.now + 20_000);
    health.failed('b', failure('rate_limit', 429, { retryAfterSeconds: 3_600 }));
    expect(health.status('b').until).toBe(clock.now + 60_000);
  });

  it('backs off 1 s, 2 s, 4 s… after failures in a row, probe failures included, and starts over after a success', () => {
    const { clock, health } = setup(5_000);
    const cooldowns: number[] = [];
    for (let step = 0; step < 5; step++) {
      health.failed('a', failure('connect', null));
      const until = health.status('a').until as number;
      cooldowns.push(until - clock.now);
      clock.now = until;
      expect(health.take('a')).toBe(true);
    }
    expect(cooldowns).toEqual([1_000, 2_000, 4_000, 5_000, 5_000]);
    health.succeeded('a');
    health.failed('a', failure('connect', null));
    expect((health.status('a').until as number) - clock.now).toBe(1_000);
  });

  it('marks a credential the upstream refused as failed until an operator resets it', () => {
    const { clock, health } = setup();
    health.failed('a', failure('auth', 401));
    expect(health.status('a')).toMatchObject({ state: 'failed', until: null, reason: 'the upstream refused the credential (401)' });
    clock.now += 3_600_000;
    expect(health.take('a')).toBe(false);
    health.reset('a');
    expect(health.status('a').state).toBe('healthy');
    expect(health.status('a').lastError).toBe('auth 401: boom');
  });

  it("leaves the state alone for the caller's own mistakes, and a disabled credential stays disabled", () => {
    const { health, transitions } = setup();
    health.failed('a', failure('caller', 400));
    expect(health.status('a').state).toBe('healthy');
    health.disable('a');
    health.failed('a', failure('server', 500));
    expect(health.status('a').state).toBe('disabled');
    expect(health.take('a')).toBe(false);
    health.reset('a');
    expect(health.status('a').state).toBe('disabled');
    health.enable('a');
    expect(health.take('a')).toBe(true);
    expect(transitions.map(({ to, reason }) => [to, reason])).toEqual([
      ['disabled', 'disabled by an operator'],
      ['healthy', 'enabled by an operator'],
    ]);
  });

  it('cools a spent quota for the longest cooldown, and keeps the cause of each cooldown', () => {
    const { clock, health } = setup(120_000);
    health.failed('a', failure('quota', 429));
    health.failed('b', failure('rate_limit', 429, { retryAfterSeconds: 7 }));
    expect(health.status('a')).toMatchObject({ state: 'cooling', until: clock.now + 120_000, reason: 'quota or balance spent' });
    expect(health.status('b')).toMatchObject({ state: 'cooling', until: clock.now + 7_000, cause: 'rate_limit' });
  });

  it('does not count failures of requests already under way when the cooldown began as further steps', () => {
    const { clock, health } = setup();
    for (let request = 0; request < 10; request++) health.failed('a', failure('connect', null));
    expect(health.status('a')).toMatchObject({ state: 'cooling', until: clock.now + 1_000, cooldownsInARow: 1 });
    // A later Retry-After that ends after the backoff lengthens the cooldown, still one step.
    health.failed('a', failure('rate_limit', 429, { retryAfterSeconds: 3 }));
    expect(health.status('a')).toMatchObject({ until: clock.now + 3_000, cooldownsInARow: 1, cause: 'rate_limit' });
    clock.now += 3_000;
    expect(health.usable('a')).toBe(true);
    expect(health.take('a')).toBe(true);
    expect(health.usable('a')).toBe(false);
    health.failed('a', failure('connect', null));
    expect(health.status('a')).toMatchObject({ until: clock.now + 2_000, cooldownsInARow: 2 });
  });

  it('takes a state decided by another process as it is, without a transition of its own', () => {
    const { clock, health, transitions } = setup();
    health.adopt('a', {
      state: 'cooling',
      until: clock.now + 5_000,
      reason: 'rate limited',
      since: clock.now,
      cooldownsInARow: 1,
      cause: 'rate_limit',
      lastError: null,
    });
    expect(health.take('a')).toBe(false);
    health.adopt('a', { state: 'healthy', until: null, reason: null, since: clock.now, cooldownsInARow: 0, cause: null, lastError: null });
    expect(health.take('a')).toBe(true);
    expect(health.status('a')).toMatchObject({ state: 'healthy', until: null });
    expect(transitions).toEqual([]);
  });

  it("frees the probe of an attempt that was not the credential's fault", () => {
    const { clock, health } = setup();
    health.failed('a', failure('connect', null));
    clock.now += 1_000;
    expect(health.take('a')).toBe(true);
    health.released('a');
    expect(health.take('a')).toBe(true);
  });

  it("never cools a credential for one caller's 5xx, timeouts or broken answers, however many", () => {
    const { health, transitions } = setup();
    for (let request = 0; request < 50; request++) {
      for (const failureClass of ['server', 'overloaded', 'protocol', 'timeout'] as const) health.failed('a', failure(failureClass, 500), 'team-a');
    }
    expect(health.status('a').state).toBe('healthy');
    expect(health.usable('a')).toBe(true);
    expect(transitions).toEqual([]);
  });

  it('cools a credential on 5xx in a row from two callers, and a success or a minute of quiet starts the count over', () => {
    const { clock, health } = setup();
    health.failed('a', failure('server', 500), 'team-a');
    health.failed('a', failure('server', 502), 'team-a');
    health.succeeded('a');
    health.failed('a', failure('server', 500), 'team-b');
    health.failed('a', failure('server', 500), 'team-a');
    expect(health.status('a').state).toBe('healthy');
    clock.now += 61_000;
    // The two failures a minute ago are not this streak's.
    health.failed('a', failure('server', 500), 'team-a');
    health.failed('a', failure('server', 500), 'team-a');
    expect(health.status('a').state).toBe('healthy');
    health.failed('a', failure('overloaded', 503), 'team-b');
    expect(health.status('a')).toMatchObject({ state: 'cooling', until: clock.now + 1_000, cooldownsInARow: 1, cause: 'overloaded' });
    expect(health.status('a').reason).toBe('overloaded failure (503) from 3 requests in a row, of more than one caller, backoff step 1');
  });

  it('cools at once on what only the credential or the server can cause: a refused connection, a 429, a spent quota, a refused key', () => {
    const { health } = setup();
    health.failed('a', failure('connect', null), 'team-a');
    health.failed('b', failure('rate_limit', 429), 'team-a');
    health.failed('c', failure('quota', 402), 'team-a');
    health.failed('d', failure('auth', 401), 'team-a');
    expect(['a', 'b', 'c', 'd'].map((id) => health.status(id).state)).toEqual(['cooling', 'cooling', 'cooling', 'failed']);
  });

  it("leaves a credential alone for every caller's mistake, an upstream 404 included", () => {
    const { health } = setup();
    for (const status of [400, 404, 405, 413, 422]) for (const team of ['team-a', 'team-b', 'team-c']) health.failed('a', failure('caller', status), team);
    expect(health.status('a').state).toBe('healthy');
  });

  it('a failed probe from one caller leaves the next request to probe again; two callers cool it for the next step', () => {
    const { clock, health } = setup();
    for (const team of ['team-a', 'team-b', 'team-a']) health.failed('a', failure('server', 500), team);
    clock.now += 1_000;
    expect(health.take('a')).toBe(true);
    health.failed('a', failure('server', 500), 'team-a');
    expect(health.take('a')).toBe(true);
    health.failed('a', failure('server', 500), 'team-a');
    expect(health.take('a')).toBe(true);
    health.failed('a', failure('server', 500), 'team-b');
    expect(health.status('a')).toMatchObject({ state: 'cooling', until: clock.now + 2_000, cooldownsInARow: 2 });
  });

  it('reads a cooldown that has ended as it is now: healthy, the next request probing it', () => {
    const { clock, health } = setup();
    health.failed('a', failure('rate_limit', 429, { retryAfterSeconds: 2 }));
    expect(health.current('a')).toMatchObject({ state: 'cooling', until: clock.now + 2_000 });
    clock.now += 2_000;
    expect(health.current('a')).toMatchObject({
      state: 'healthy',
      until: null,
      reason: 'cooldown ended; the next request probes it',
      since: clock.now,
      cooldownsInARow: 1,
    });
    expect(health.take('a')).toBe(true);
    expect(health.current('a')).toMatchObject({ state: 'cooling', until: null, reason: 'cooldown ended; a probe request is under way' });
  });
});
