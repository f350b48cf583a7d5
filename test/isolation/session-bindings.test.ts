import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_SESSIONS_PER_TEAM, SessionBindings } from '../../src/routing/session-bindings.js';
import { MemoryState } from '../../src/state/memory-state.js';
import { collectGarbage } from '../support/collect-garbage.js';

const SESSIONS = 100_000;
const HOUR_MS = 3_600_000;

/** What binding SESSIONS distinct session ids of one team adds to the heap, and how many bindings the state then holds. */
async function bindDistinctSessions(
  maxSessionsPerTeam: number,
): Promise<{ addedBytes: number; held: number; lastBound: string | null; firstBound: string | null }> {
  const state = new MemoryState();
  const bindings = new SessionBindings(
    state,
    HOUR_MS,
    (error) => {
      throw error;
    },
    maxSessionsPerTeam,
  );
  const keyOf = (index: number) =>
    SessionBindings.key({ team: 'noisy', model: 'gpt-4o-mini', id: `session-${index.toString(36)}-${'x'.repeat(24)}`, source: 'header' });
  collectGarbage();
  const before = process.memoryUsage().heapUsed;
  for (let index = 0; index < SESSIONS; index++) await bindings.bind(keyOf(index), 'openai-a', 'noisy');
  collectGarbage();
  const addedBytes = process.memoryUsage().heapUsed - before;
  const result = { addedBytes, held: state.size, lastBound: await state.get(keyOf(SESSIONS - 1)), firstBound: await state.get(keyOf(0)) };
  await state.close();
  return result;
}

describe('session bindings of one team are capped (routing.max_sessions_per_team)', () => {
  it(`holds at most ${DEFAULT_MAX_SESSIONS_PER_TEAM} bindings of a team that names ${SESSIONS} distinct sessions, the earliest unbound first`, async () => {
    const uncapped = await bindDistinctSessions(Number.MAX_SAFE_INTEGER);
    const capped = await bindDistinctSessions(DEFAULT_MAX_SESSIONS_PER_TEAM);
    console.log(
      `${SESSIONS} distinct sessions: ${(uncapped.addedBytes / 1e6).toFixed(1)} MB held uncapped (${uncapped.held} bindings), ${(capped.addedBytes / 1e6).toFixed(1)} MB capped (${capped.held} bindings)`,
    );
    expect(uncapped.held).toBe(SESSIONS);
    expect(capped.held).toBe(DEFAULT_MAX_SESSIONS_PER_TEAM);
    expect(capped.lastBound).toBe('openai-a');
    expect(capped.firstBound).toBeNull();
    // Bounded by the cap, not by the sessions named: about a tenth of the uncapped figure.
    expect(capped.addedBytes).toBeLessThan(uncapped.addedBytes / 4);
  }, 60_000);

  it("never unbinds another team's sessions", async () => {
    const state = new MemoryState();
    const bindings = new SessionBindings(
      state,
      HOUR_MS,
      (error) => {
        throw error;
      },
      100,
    );
    const keyOf = (team: string, index: number) => SessionBindings.key({ team, model: 'gpt-4o-mini', id: `session-${index}`, source: 'header' });
    await bindings.bind(keyOf('quiet', 0), 'openai-b', 'quiet');
    for (let index = 0; index < 1_000; index++) await bindings.bind(keyOf('noisy', index), 'openai-a', 'noisy');
    expect(await bindings.lookup(keyOf('quiet', 0))).toBe('openai-b');
    expect(await bindings.lookup(keyOf('noisy', 899))).toBeNull();
    expect(await bindings.lookup(keyOf('noisy', 900))).toBe('openai-a');
    await state.close();
  });
});
