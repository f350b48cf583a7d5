import { describe, expect, it } from 'vitest';
import { hash32, rendezvousScore } from './rendezvous.js';

function winner(key: string, credentials: ReadonlyArray<{ id: string; weight: number }>): string {
  const keyHash = hash32(key);
  let best = credentials[0] as { id: string; weight: number };
  let bestScore = -Infinity;
  for (const credential of credentials) {
    const score = rendezvousScore(keyHash, hash32(credential.id), credential.weight);
    if (score > bestScore) [best, bestScore] = [credential, score];
  }
  return best.id;
}

describe('weighted rendezvous hashing', () => {
  it('splits keys by weight', () => {
    const pool = [
      { id: 'a', weight: 1 },
      { id: 'b', weight: 1 },
      { id: 'c', weight: 2 },
    ];
    const counts = new Map<string, number>();
    for (let key = 0; key < 20_000; key++) {
      const id = winner(`session-${key}`, pool);
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    expect((counts.get('a') ?? 0) / 20_000).toBeCloseTo(0.25, 1);
    expect((counts.get('b') ?? 0) / 20_000).toBeCloseTo(0.25, 1);
    expect((counts.get('c') ?? 0) / 20_000).toBeCloseTo(0.5, 1);
  });

  it('moves only the keys of a credential that leaves', () => {
    const pool = ['a', 'b', 'c', 'd'].map((id) => ({ id, weight: 1 }));
    const without = pool.filter(({ id }) => id !== 'c');
    for (let key = 0; key < 2_000; key++) {
      const before = winner(`k${key}`, pool);
      if (before !== 'c') expect(winner(`k${key}`, without)).toBe(before);
    }
  });

  it('is a pure function of its inputs', () => {
    expect(hash32('session-1')).toBe(hash32('session-1'));
    expect(hash32('session-1')).not.toBe(hash32('session-2'));
    expect(rendezvousScore(1, 2, 1)).toBeGreaterThan(0);
  });
});
