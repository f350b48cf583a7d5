import type { BudgetedEntry, BudgetOutcome, BudgetUsage, ByteBudget } from './shared-state.js';

/** A value as MemoryState keeps it. */
export interface BudgetedValue {
  value: string;
  expiresAtMs: number;
}

interface Counted {
  group: string;
  bytes: number;
  expiresAtMs: number;
}

interface GroupCount {
  bytes: number;
  /** Its keys, oldest first (a Set keeps insertion order, and a key set again is moved to the end). */
  readonly keys: Set<string>;
}

interface Pool {
  bytes: number;
  /** Every counted key of the pool, oldest first. */
  readonly entries: Map<string, Counted>;
  readonly groups: Map<string, GroupCount>;
}

/**
 * The byte budgets of MemoryState (`setWithinBudget`): what each pool and group holds, and in what
 * order its keys were set, over the values MemoryState keeps. Called only from MemoryState's async
 * methods, which never await, so each step runs whole before any other. A pool's entries share a
 * TTL, so its oldest are also the first to expire: pruning stops at the first live one.
 */
export class MemoryBudgets {
  private readonly pools = new Map<string, Pool>();

  constructor(private readonly values: Map<string, BudgetedValue>) {}

  setWithinBudget(poolName: string, group: string, entries: readonly BudgetedEntry[], ttlMs: number, budget: ByteBudget, now: number): BudgetOutcome {
    const pool = this.pool(poolName);
    this.prune(pool, now);
    const weights = entries.map((entry) => Buffer.byteLength(entry.key) + Buffer.byteLength(entry.value));
    const weight = weights.reduce((sum, bytes) => sum + bytes, 0);
    if (weight > budget.groupBytes || weight > budget.totalBytes) {
      this.dropIfEmpty(poolName, pool);
      return { stored: false, evicted: 0 };
    }
    for (const entry of entries) this.forget(pool, entry.key);
    let evicted = 0;
    const own = pool.groups.get(group);
    while (own !== undefined && own.bytes + weight > budget.groupBytes) {
      const oldest = first(own.keys);
      if (oldest === undefined) break;
      this.evict(pool, oldest);
      evicted += 1;
    }
    while (pool.bytes + weight > budget.totalBytes) {
      const oldest = first(pool.entries.keys());
      if (oldest === undefined) break;
      this.evict(pool, oldest);
      evicted += 1;
    }
    let counts = pool.groups.get(group);
    if (counts === undefined) {
      counts = { bytes: 0, keys: new Set() };
      pool.groups.set(group, counts);
    }
    const expiresAtMs = now + ttlMs;
    entries.forEach((entry, index) => {
      const bytes = weights[index] as number;
      this.values.set(entry.key, { value: entry.value, expiresAtMs });
      pool.entries.set(entry.key, { group, bytes, expiresAtMs });
      counts.keys.add(entry.key);
    });
    counts.bytes += weight;
    pool.bytes += weight;
    return { stored: true, evicted };
  }

  usage(poolName: string, group: string, now: number): BudgetUsage {
    const pool = this.pools.get(poolName);
    if (pool === undefined) return { groupBytes: 0, totalBytes: 0 };
    this.prune(pool, now);
    const usage = { groupBytes: pool.groups.get(group)?.bytes ?? 0, totalBytes: pool.bytes };
    this.dropIfEmpty(poolName, pool);
    return usage;
  }

  /** Lets go of what expired in every pool (MemoryState's sweep). */
  sweep(now: number): void {
    for (const [name, pool] of this.pools) {
      this.prune(pool, now);
      this.dropIfEmpty(name, pool);
    }
  }

  clear(): void {
    this.pools.clear();
  }

  private pool(name: string): Pool {
    let pool = this.pools.get(name);
    if (pool === undefined) {
      pool = { bytes: 0, entries: new Map(), groups: new Map() };
      this.pools.set(name, pool);
    }
    return pool;
  }

  private prune(pool: Pool, now: number): void {
    for (const [key, counted] of pool.entries) {
      if (counted.expiresAtMs > now) break;
      this.forget(pool, key);
    }
  }

  /** Stops counting `key` (its value, if still there, is left alone). */
  private forget(pool: Pool, key: string): void {
    const counted = pool.entries.get(key);
    if (counted === undefined) return;
    pool.entries.delete(key);
    pool.bytes -= counted.bytes;
    const group = pool.groups.get(counted.group);
    if (group === undefined) return;
    group.keys.delete(key);
    group.bytes -= counted.bytes;
    if (group.keys.size === 0) pool.groups.delete(counted.group);
  }

  private evict(pool: Pool, key: string): void {
    this.forget(pool, key);
    this.values.delete(key);
  }

  private dropIfEmpty(name: string, pool: Pool): void {
    if (pool.entries.size === 0) this.pools.delete(name);
  }
}

function first<Value>(values: Iterable<Value>): Value | undefined {
  for (const value of values) return value;
  return undefined;
}
