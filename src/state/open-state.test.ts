import { describe, expect, it } from 'vitest';
import { MemoryState } from './memory-state.js';
import { openState } from './open-state.js';

describe('openState', () => {
  it('opens the in-process backend for "memory", passing its options on', async () => {
    const state = await openState('memory', { now: () => 5_500 });
    try {
      expect(state).toBeInstanceOf(MemoryState);
      expect((await state.addToWindow('team', 1, 1_000)).windowStartMs).toBe(5_000);
    } finally {
      await state.close();
    }
  });

  it('refuses Redis until its backend exists, saying to use memory, without repeating the URL', async () => {
    for (const url of ['redis://:secret@127.0.0.1:6379', 'rediss://user:secret@cache.internal:6380/2']) {
      const refusal = openState(url);
      await expect(refusal).rejects.toThrow(/Redis state backend arrives with the rate-limit work.*"memory"/);
      await expect(refusal).rejects.not.toThrow(/secret/);
    }
  });

  it('names the accepted forms for anything else, and only the scheme of a URL', async () => {
    await expect(openState('postgres://admin:secret@db/switchyard')).rejects.toThrow('state.url must be "memory", "redis://…" or "rediss://…", got a "postgres:" URL');
    await expect(openState('Memory')).rejects.toThrow('got "Memory"');
    await expect(openState('')).rejects.toThrow('got ""');
    await expect(openState('redis:/one-slash')).rejects.toThrow('got a "redis:" URL');
  });
});
