import { expect, it } from 'vitest';
import type { ContractContext } from './state-contract.js';
import type { ByteBudget } from './shared-state.js';

/** The contract for byte budgets: setWithinBudget, budgetUsage. */
export function describeBudgetChecks(context: ContractContext): void {
  const { ttlMs: TTL_MS } = context.timing;
  /** An entry of exactly `bytes` (key and value together). */
  const entry = (key: string, bytes: number) => ({ key, value: 'v'.repeat(bytes - Buffer.byteLength(key)) });
  const BUDGET: ByteBudget = { groupBytes: 300, totalBytes: 500 };

  it('sets values that get reads, counting the UTF-8 bytes of each key and value', async () => {
    const { state } = context;
    expect(await state.setWithinBudget('responses', 'team-a', [entry('a1', 100), { key: 'a2', value: 'é€' }], TTL_MS, BUDGET)).toEqual({
      stored: true,
      evicted: 0,
    });
    expect(await state.get('a1')).toBe('v'.repeat(98));
    expect(await state.get('a2')).toBe('é€');
    expect(await state.budgetUsage('responses', 'team-a')).toEqual({ groupBytes: 100 + 2 + 5, totalBytes: 107 });
    expect(await state.budgetUsage('responses', 'team-b')).toEqual({ groupBytes: 0, totalBytes: 107 });
    expect(await state.budgetUsage('other-pool', 'team-a')).toEqual({ groupBytes: 0, totalBytes: 0 });
  });

  it("evicts the group's oldest entries first when the group would go over its budget, and no other group's", async () => {
    const { state } = context;
    await state.setWithinBudget('responses', 'team-b', [entry('b1', 100)], TTL_MS, BUDGET);
    for (const key of ['a1', 'a2', 'a3']) await state.setWithinBudget('responses', 'team-a', [entry(key, 100)], TTL_MS, BUDGET);
    expect(await state.setWithinBudget('responses', 'team-a', [entry('a4', 150)], TTL_MS, BUDGET)).toEqual({ stored: true, evicted: 2 });
    expect(await state.get('a1')).toBeNull();
    expect(await state.get('a2')).toBeNull();
    expect(await state.get('a3')).not.toBeNull();
    expect(await state.get('a4')).not.toBeNull();
    expect(await state.get('b1')).not.toBeNull();
    expect(await state.budgetUsage('responses', 'team-a')).toEqual({ groupBytes: 250, totalBytes: 350 });
  });

  it("evicts the pool's oldest entries, whatever their group, when the pool would go over its budget", async () => {
    const { state } = context;
    await state.setWithinBudget('responses', 'team-a', [entry('a1', 200)], TTL_MS, BUDGET);
    await state.setWithinBudget('responses', 'team-b', [entry('b1', 200)], TTL_MS, BUDGET);
    expect(await state.setWithinBudget('responses', 'team-c', [entry('c1', 150)], TTL_MS, BUDGET)).toEqual({ stored: true, evicted: 1 });
    expect(await state.get('a1')).toBeNull();
    expect(await state.get('b1')).not.toBeNull();
    expect(await state.budgetUsage('responses', 'team-a')).toEqual({ groupBytes: 0, totalBytes: 350 });
  });

  it('refuses entries that alone weigh more than a budget, changing nothing', async () => {
    const { state } = context;
    await state.setWithinBudget('responses', 'team-a', [entry('a1', 200)], TTL_MS, BUDGET);
    expect(await state.setWithinBudget('responses', 'team-a', [entry('big', 200), entry('big2', 101)], TTL_MS, BUDGET)).toEqual({ stored: false, evicted: 0 });
    expect(await state.setWithinBudget('responses', 'team-a', [entry('big', 301)], TTL_MS, { groupBytes: 1_000, totalBytes: 300 })).toEqual({
      stored: false,
      evicted: 0,
    });
    expect(await state.get('big')).toBeNull();
    expect(await state.get('a1')).not.toBeNull();
    expect(await state.budgetUsage('responses', 'team-a')).toEqual({ groupBytes: 200, totalBytes: 200 });
  });

  it('counts a key set again once, and in the group that set it last', async () => {
    const { state } = context;
    await state.setWithinBudget('responses', 'team-a', [entry('k', 200)], TTL_MS, BUDGET);
    expect(await state.setWithinBudget('responses', 'team-a', [entry('k', 250)], TTL_MS, BUDGET)).toEqual({ stored: true, evicted: 0 });
    expect(await state.budgetUsage('responses', 'team-a')).toEqual({ groupBytes: 250, totalBytes: 250 });
    await state.setWithinBudget('responses', 'team-b', [entry('k', 100)], TTL_MS, BUDGET);
    expect(await state.budgetUsage('responses', 'team-a')).toEqual({ groupBytes: 0, totalBytes: 100 });
    expect(await state.budgetUsage('responses', 'team-b')).toEqual({ groupBytes: 100, totalBytes: 100 });
  });

  it('stops counting entries once they expire', async () => {
    const { state, clock } = context;
    await state.setWithinBudget('responses', 'team-a', [entry('a1', 200)], TTL_MS, BUDGET);
    await clock.advance(TTL_MS / 2);
    await state.setWithinBudget('responses', 'team-a', [entry('a2', 100)], TTL_MS, BUDGET);
    await clock.advance(TTL_MS / 2);
    expect(await state.get('a1')).toBeNull();
    expect(await state.budgetUsage('responses', 'team-a')).toEqual({ groupBytes: 100, totalBytes: 100 });
    expect(await state.setWithinBudget('responses', 'team-a', [entry('a3', 200)], TTL_MS, BUDGET)).toEqual({ stored: true, evicted: 0 });
    expect(await state.get('a2')).not.toBeNull();
  });

  it('stays within budget under concurrent writes, from every handle', async () => {
    const { state, clock, openSecondHandle } = context;
    const other = openSecondHandle === undefined ? state : await openSecondHandle(clock);
    try {
      const writes = Array.from({ length: 40 }, (_, index) =>
        (index % 2 === 0 ? state : other).setWithinBudget('responses', `team-${index % 3}`, [entry(`k${index}`, 60)], TTL_MS, BUDGET),
      );
      expect((await Promise.all(writes)).every((outcome) => outcome.stored)).toBe(true);
      let live = 0;
      for (let index = 0; index < 40; index += 1) if ((await state.get(`k${index}`)) !== null) live += 60;
      const usage = await state.budgetUsage('responses', 'team-0');
      expect(usage.totalBytes).toBe(live);
      expect(usage.totalBytes).toBeLessThanOrEqual(BUDGET.totalBytes);
      expect(usage.groupBytes).toBeLessThanOrEqual(BUDGET.groupBytes);
    } finally {
      if (other !== state) await other.close();
    }
  });

  it('rejects invalid arguments with a TypeError, changing nothing', async () => {
    const { state } = context;
    await expect(state.setWithinBudget('responses', 'team-a', [], TTL_MS, BUDGET)).rejects.toThrow(TypeError);
    await expect(state.setWithinBudget('responses', 'team-a', [entry('k', 10), entry('k', 10)], TTL_MS, BUDGET)).rejects.toThrow(TypeError);
    await expect(state.setWithinBudget('responses', 'team-a', [entry('k', 10)], 0, BUDGET)).rejects.toThrow(TypeError);
    await expect(state.setWithinBudget('responses', 'team-a', [entry('k', 10)], TTL_MS, { groupBytes: 0, totalBytes: 10 })).rejects.toThrow(TypeError);
    await expect(state.setWithinBudget('responses', 'team-a', [entry('k', 10)], TTL_MS, { groupBytes: 10, totalBytes: Number.NaN })).rejects.toThrow(TypeError);
    expect(await state.get('k')).toBeNull();
  });
}
