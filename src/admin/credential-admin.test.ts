import { describe, expect, it } from 'vitest';
import { CredentialHealth, InFlight } from '../routing/index.js';
import { CredentialAdmin } from './credential-admin.js';

describe('CredentialAdmin', () => {
  it('shows a credential as it is when read: a cooldown already past is no longer cooling', () => {
    const clock = { now: Date.parse('2026-11-24T12:00:00Z') };
    const health = new CredentialHealth({ now: () => clock.now });
    const admin = new CredentialAdmin(new Map([['openai-a', { provider: 'openai' }]]), health, new InFlight());
    health.failed('openai-a', {
      class: 'rate_limit',
      status: 429,
      retryAfterSeconds: 20,
      rateLimitHeaders: {},
      credentialId: 'openai-a',
      message: 'slow down',
    });
    expect(admin.get('openai-a')).toMatchObject({ state: 'cooling', until: '2026-11-24T12:00:20.000Z' });
    // Eleven minutes later, with no request to touch it.
    clock.now += 11 * 60_000;
    expect(admin.get('openai-a')).toMatchObject({
      state: 'healthy',
      until: null,
      since: '2026-11-24T12:00:20.000Z',
      cooldowns_in_a_row: 1,
      last_error: 'rate_limit 429: slow down',
    });
    expect(admin.list()[0]).toMatchObject({ state: 'healthy', until: null });
  });
});
