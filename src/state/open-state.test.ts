import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryState } from './memory-state.js';
import { openState } from './open-state.js';
import { RedisState } from './redis-state.js';

const REDIS_URL = process.env.TEST_REDIS_URL;

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

  it.skipIf(!REDIS_URL)('opens Redis for "redis://…", passing its options on', async () => {
    const keyPrefix = `switchyard-test:${randomBytes(6).toString('hex')}:`;
    const state = await openState(REDIS_URL ?? '', { keyPrefix, connectTimeoutMs: 2_000 });
    try {
      expect(state).toBeInstanceOf(RedisState);
      await state.set('key', 'value', 1_000);
      expect(await state.get('key')).toBe('value');
      expect(await state.delete('key')).toBe(true);
    } finally {
      await state.close();
    }
  });

  it('refuses a Redis it cannot reach within connectTimeoutMs, naming the URL but never its password', async () => {
    const cases = [
      ['redis://:secret@127.0.0.1:1/0', 'redis://:***@127.0.0.1:1/0'],
      ['rediss://user:s%40cret@127.0.0.1:1/2', 'rediss://user:***@127.0.0.1:1/2'],
      ['redis://127.0.0.1:1', 'redis://127.0.0.1:1'],
    ];
    for (const [url = '', shown = ''] of cases) {
      const started = Date.now();
      const refusal = openState(url, { connectTimeoutMs: 300 });
      await expect(refusal).rejects.toThrow(`state.url: cannot reach Redis at ${shown}: connect ECONNREFUSED 127.0.0.1:1`);
      await expect(refusal).rejects.not.toThrow(/s(%40|@)cret/);
      expect(Date.now() - started).toBeLessThan(2_000);
    }
  });

  it('refuses a Redis URL it cannot parse without repeating any of it', async () => {
    const refusal = openState('redis://:secret@[::1');
    await expect(refusal).rejects.toThrow('state.url: cannot reach Redis: the URL cannot be parsed');
    await expect(refusal).rejects.not.toThrow(/secret/);
  });

  it('rejects Redis options that are not positive integers with a TypeError', async () => {
    await expect(openState('redis://127.0.0.1:1', { connectTimeoutMs: 0 })).rejects.toThrow(TypeError);
    await expect(openState('redis://127.0.0.1:1', { commandTimeoutMs: Number.NaN })).rejects.toThrow(TypeError);
  });

  it('names the accepted forms for anything else, and only the scheme of a URL', async () => {
    await expect(openState('postgres://admin:secret@db/switchyard')).rejects.toThrow(
      'state.url must be "memory", "redis://…" or "rediss://…", got a "postgres:" URL',
    );
    await expect(openState('Memory')).rejects.toThrow('got "Memory"');
    await expect(openState('')).rejects.toThrow('got ""');
    await expect(openState('redis:/one-slash')).rejects.toThrow('got a "redis:" URL');
  });
});
