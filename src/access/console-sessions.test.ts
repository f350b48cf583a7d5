import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { MemoryState } from '../state/memory-state.js';
import { ConsoleSessions, csrfTokenMatches } from './console-sessions.js';

describe('ConsoleSessions', () => {
  let now = 1_700_000_000_000;
  const state = new MemoryState({ now: () => now });
  afterEach(() => {
    now += 1_000_000_000;
  });
  afterAll(async () => {
    await state.close();
  });
  const token = { tokenId: 'tok_1', hash: 'a'.repeat(64) };
  const minute = 60_000;

  it('keeps a session while it is used, and ends it after the idle time', async () => {
    const sessions = new ConsoleSessions(state, { idleMs: 10 * minute, maxAgeMs: 60 * minute }, () => now);
    const { secret, session } = await sessions.open(token);
    expect(session).toMatchObject({ tokenId: 'tok_1', tokenHash: token.hash, expiresAt: now + 60 * minute });
    now += 9 * minute;
    expect(await sessions.find(secret)).toEqual(session);
    // Used at 9 minutes: alive at 18, gone 10 minutes after the last use.
    now += 9 * minute;
    expect(await sessions.find(secret)).not.toBeNull();
    now += 10 * minute + 1;
    expect(await sessions.find(secret)).toBeNull();
  });

  it('ends a session at its maximum age however much it is used', async () => {
    const sessions = new ConsoleSessions(state, { idleMs: 10 * minute, maxAgeMs: 25 * minute }, () => now);
    const { secret } = await sessions.open(token);
    for (let elapsed = 5; elapsed < 25; elapsed += 5) {
      now += 5 * minute;
      expect(await sessions.find(secret), `${elapsed} minutes`).not.toBeNull();
    }
    now += 5 * minute;
    expect(await sessions.find(secret)).toBeNull();
  });

  it('ends a session on sign-out, and knows nothing of made-up secrets', async () => {
    const sessions = new ConsoleSessions(state, { idleMs: 10 * minute, maxAgeMs: 60 * minute }, () => now);
    const { secret } = await sessions.open(token);
    expect(await sessions.find('x'.repeat(43))).toBeNull();
    expect(await sessions.find('not a secret')).toBeNull();
    expect(await sessions.end(secret)).toBe(true);
    expect(await sessions.find(secret)).toBeNull();
    expect(await sessions.end(secret)).toBe(false);
  });

  it('stores neither the cookie secret nor anything that can be replayed as it', async () => {
    const sessions = new ConsoleSessions(state, { idleMs: 10 * minute, maxAgeMs: 60 * minute }, () => now);
    const { secret } = await sessions.open(token);
    const keys = [...(state as unknown as { values: Map<string, unknown> }).values.keys()];
    expect(keys.some((key) => key.includes(secret))).toBe(false);
  });

  it('matches the CSRF token exactly', async () => {
    const sessions = new ConsoleSessions(state, { idleMs: 10 * minute, maxAgeMs: 60 * minute }, () => now);
    const { session } = await sessions.open(token);
    expect(csrfTokenMatches(session, session.csrfToken)).toBe(true);
    expect(csrfTokenMatches(session, undefined)).toBe(false);
    expect(csrfTokenMatches(session, '')).toBe(false);
    expect(csrfTokenMatches(session, `${session.csrfToken.slice(0, -1)}${session.csrfToken.endsWith('A') ? 'B' : 'A'}`)).toBe(false);
  });

  it('answers 503 state_unavailable, not a bug, when the shared state cannot be reached', async () => {
    const away = new MemoryState();
    const sessions = new ConsoleSessions(away, { idleMs: 10 * minute, maxAgeMs: 60 * minute });
    const { secret } = await sessions.open(token);
    // A closed state rejects every call, as Redis does while it is away.
    await away.close();
    await expect(sessions.find(secret)).rejects.toMatchObject({ code: 'state_unavailable', status: 503 });
    await expect(sessions.open(token)).rejects.toMatchObject({ code: 'state_unavailable' });
    await expect(sessions.end(secret)).rejects.toMatchObject({ code: 'state_unavailable' });
  });
});
